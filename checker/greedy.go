package checker

// greedy looks for one legal order with almost no backtracking: at each
// step it linearizes, among the operations that may go next (called before
// the earliest pending return), one that the model accepts: preferably one
// that keeps the holder, else the one with the earliest return. An
// operation with an unknown outcome waits until nothing else can go (it can
// always go last, where it changes nothing); if the search gets stuck, it
// goes back to where the latest such operation became possible and takes its
// effect there instead, once per operation.
//
// Finding an order proves the segment legal; not finding one proves
// nothing, and porcupine's exhaustive search takes over. On lock histories
// the greedy order is almost always right, and it runs in time linear in the
// segment (times the number of concurrently open operations, and the number
// of unknown outcomes).
type greedy struct {
	open  []*input // pending candidates, sorted by return
	stack []checkpoint
	eager map[*input]bool
}

// checkpoint is the search as it was when an unknown operation became
// possible.
type checkpoint struct {
	s    state
	open []*input
	i, j int
	u    *input
}

// run replays begin, then ops (sorted by call) plus extra (unknown
// operations carried in from earlier segments, sorted by call).
func (g *greedy) run(m *model, begin *input, extra, ops []input) bool {
	s, ok := m.step(state{}, begin)
	if !ok {
		return false
	}
	g.open, g.stack = g.open[:0], g.stack[:0]
	clear(g.eager)
	i, j := 0, 0 // next of extra, next of ops
	for {
		// Admit every operation called no later than the earliest pending
		// return: those are the ones that may linearize next.
		for {
			var next *input
			fromExtra := i < len(extra) && (j >= len(ops) || extra[i].call <= ops[j].call)
			switch {
			case fromExtra:
				next = &extra[i]
			case j < len(ops):
				next = &ops[j]
			}
			if next == nil || (len(g.open) > 0 && next.call > g.open[0].ret) {
				break
			}
			if fromExtra {
				i++
			} else {
				j++
			}
			g.insert(next)
			if next.out == outUnknown {
				if g.eager[next] {
					s = g.take(m, s, next)
				} else {
					g.stack = append(g.stack, checkpoint{s: s, open: append([]*input(nil), g.open...), i: i, j: j, u: next})
				}
			}
		}
		if i == len(extra) && j == len(ops) && g.onlyUnknown() {
			return true // the rest goes last, changing nothing
		}
		// Prefer an operation that leaves the holder as it is (a failed
		// acquire, an extend, an observation): taking a release or an
		// acquire first could strand an observation that needed the old
		// holder. Otherwise the earliest return that the model accepts.
		pick, next := g.choose(m, s)
		if pick < 0 {
			pick, next = g.chooseUnknown(m, s)
		}
		if pick >= 0 {
			s = next
			g.open = append(g.open[:pick], g.open[pick+1:]...)
			continue
		}
		if len(g.stack) == 0 {
			return false
		}
		cp := g.stack[len(g.stack)-1]
		g.stack = g.stack[:len(g.stack)-1]
		if g.eager == nil {
			g.eager = make(map[*input]bool)
		}
		g.eager[cp.u] = true
		s, i, j = cp.s, cp.i, cp.j
		g.open = append(g.open[:0], cp.open...)
		s = g.take(m, s, cp.u)
	}
}

// take linearizes the open operation in right away if the model lets it
// without waiting for a lease to run out.
func (g *greedy) take(m *model, s state, in *input) state {
	ns, ok := m.step(s, in)
	if !ok || ns.now > max(s.now, in.call) {
		return s
	}
	for x, o := range g.open {
		if o == in {
			g.open = append(g.open[:x], g.open[x+1:]...)
			break
		}
	}
	return ns
}

// choose picks the next operation among the open ones with a known
// outcome; -1 if none can go.
func (g *greedy) choose(m *model, s state) (int, state) {
	pick, next := -1, state{}
	for x, in := range g.open {
		if in.out == outUnknown {
			continue
		}
		ns, ok := m.step(s, in)
		if !ok {
			continue
		}
		if ns.holder == s.holder && ns.lost == s.lost {
			return x, ns
		}
		if pick < 0 {
			pick, next = x, ns
		}
	}
	return pick, next
}

// chooseUnknown picks an unknown operation to take effect when nothing else
// can go: preferably one that takes effect at once, else one that waits for
// a lease to end. One without effect here is of no use: it goes last.
func (g *greedy) chooseUnknown(m *model, s state) (int, state) {
	pick, next := -1, state{}
	for x, in := range g.open {
		if in.out != outUnknown {
			continue
		}
		ns, ok := m.step(s, in)
		if !ok || (ns.holder == s.holder && ns.lost == s.lost && ns.lease == s.lease && ns.latest == s.latest) {
			continue
		}
		if ns.now <= max(s.now, in.call) {
			return x, ns
		}
		if pick < 0 {
			pick, next = x, ns
		}
	}
	return pick, next
}

func (g *greedy) onlyUnknown() bool {
	for _, in := range g.open {
		if in.out != outUnknown {
			return false
		}
	}
	return true
}

// insert keeps open sorted by return (calls arrive in order, so ties keep
// call order).
func (g *greedy) insert(in *input) {
	x := len(g.open)
	g.open = append(g.open, in)
	for x > 0 && g.open[x-1].ret > in.ret {
		g.open[x] = g.open[x-1]
		x--
	}
	g.open[x] = in
}
