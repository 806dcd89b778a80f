package checker

// A brute-force reference for the models, written from the specification
// rather than from the model's shortcuts: it enumerates every order, every
// linearization instant on an integer grid, every concrete lease deadline
// and every effect or non-effect of an unknown operation. The model instead
// takes each operation at its earliest instant, expires leases lazily and
// lets an unknown operation take effect whenever it can (porcupine placing
// it last stands for "no effect"). The fuzz test checks the two agree.

const refInf = int64(1) << 60

type refState struct {
	mask  uint32
	q     int64 // the previous operation's instant
	h     int32 // holder, 0 when free
	x     int64 // the key is gone at instants after x; refInf: not within the horizon
	noExp bool  // set without expiry: PTTL -1
	lost  bool
	fence int64
}

type reference struct {
	ops   []input
	loss  lossWindows
	tol   int64
	horiz int64 // instants beyond every call and return
	deadl int64 // deadlines beyond every instant any bound compares with
	known uint32
	seen  map[refState]bool
}

func newReference(ops []input, loss lossWindows, tol int64) *reference {
	r := &reference{ops: ops, loss: loss, tol: tol, seen: map[refState]bool{}}
	for i, in := range ops {
		r.horiz = max(r.horiz, in.call+1)
		if in.ret != never {
			r.horiz = max(r.horiz, in.ret+1)
		}
		if in.out != outUnknown {
			r.known |= 1 << i
		}
	}
	r.deadl = r.horiz + 16
	return r
}

// legal says whether some order of the operations is legal, starting from
// a free key (or a fence counter at fence) just before the first call.
func (r *reference) legal(fence int64, fenceLost bool) bool {
	first := never
	for _, in := range r.ops {
		first = min(first, in.call)
	}
	return r.dfs(refState{q: first - 1, fence: fence, lost: fenceLost})
}

func (r *reference) dfs(s refState) bool {
	if s.mask&r.known == r.known {
		return true // unknown operations left over go last, with no effect
	}
	if r.seen[s] {
		return false
	}
	r.seen[s] = true
	for i := range r.ops {
		if s.mask&(1<<i) != 0 {
			continue
		}
		in := &r.ops[i]
		for p := max(s.q, in.call); p <= min(in.ret, r.horiz); p++ {
			to := in.ret
			if in.out == outUnknown {
				to = p
			}
			starts := []refState{s}
			if r.loss.meets(s.q, to) {
				l := s
				l.lost = true
				starts = append(starts, l)
			}
			for _, st := range starts {
				for _, ns := range r.apply(st, in, p) {
					ns.mask |= 1 << i
					ns.q = p
					if dfs := r.dfs(ns); dfs {
						return true
					}
				}
			}
		}
	}
	return false
}

func (r *reference) alive(s refState, p int64) bool {
	return !s.lost && s.h != 0 && p <= s.x
}

// normal forgets an expired holder so that equal situations memoize once.
func (r *reference) normal(s refState, p int64) refState {
	if !s.lost && s.h != 0 && p > s.x {
		s.h, s.x, s.noExp = 0, 0, false
	}
	return s
}

// set lists the states of a key set to tok with every deadline in
// [lo, hi] (hi may be refInf); ttl 0 means no expiry.
func (r *reference) set(s refState, tok int32, ttl, lo, hi int64) []refState {
	base := s
	base.lost, base.h = false, tok
	if ttl <= 0 {
		base.x, base.noExp = refInf, true
		return []refState{base}
	}
	base.noExp = false
	var out []refState
	for x := lo; x <= hi; x++ {
		st := base
		st.x = x
		if x >= r.deadl {
			st.x = refInf
			out = append(out, st)
			break
		}
		out = append(out, st)
	}
	return out
}

// setBy is a lease set at p by an operation that returned at ret: the
// server set it somewhere up to ret, so it ends in [p+ttl-tol, ret+ttl+tol].
func (r *reference) setBy(s refState, in *input, p int64) []refState {
	return r.set(s, in.token, in.ttl, p+in.ttl-r.tol, in.ret+in.ttl+r.tol)
}

func (r *reference) apply(s refState, in *input, p int64) []refState {
	s = r.normal(s, p)
	alive := r.alive(s, p)
	mine := alive && s.h == in.token
	free := s
	free.h, free.x, free.noExp, free.lost = 0, 0, false, false
	switch in.kind {
	case kFence:
		if !s.lost && in.val <= s.fence {
			return nil
		}
		s.lost, s.fence = false, in.val
		return []refState{s}
	case kAcquire:
		switch in.out {
		case outOK:
			if !s.lost && alive {
				return nil
			}
			return r.setBy(s, in, p)
		case outFail:
			if !s.lost && !alive {
				return nil
			}
			return []refState{s}
		default:
			out := []refState{s}
			if !s.lost && !alive {
				out = append(out, r.set(s, in.token, in.ttl, p+in.ttl-r.tol, refInf)...)
			}
			return out
		}
	case kExtend, kRelease:
		switch in.out {
		case outOK:
			if !s.lost && !mine {
				return nil
			}
			if in.kind == kRelease {
				return []refState{free}
			}
			return r.setBy(s, in, p)
		case outFail:
			if !s.lost && mine {
				return nil
			}
			return []refState{s}
		default:
			out := []refState{s}
			if mine {
				if in.kind == kRelease {
					return append(out, free)
				}
				// took effect at p, while the old deadline had not passed
				hi := refInf
				if s.x != refInf {
					hi = s.x + in.ttl + r.tol
				}
				out = append(out, r.set(s, in.token, in.ttl, p+in.ttl-r.tol, hi)...)
			}
			return out
		}
	case kObserve:
		if in.val == pttlMissing {
			if !s.lost && alive {
				return nil
			}
			return []refState{free}
		}
		if s.lost {
			if in.token == 0 {
				return []refState{s}
			}
			if in.val == pttlNoExpiry {
				return r.set(s, in.token, 0, 0, 0)
			}
			left := max(in.val, 1)
			return r.set(s, in.token, left, max(p, p+left-r.tol), in.ret+left+r.tol)
		}
		if !alive || (in.token != 0 && in.token != s.h) || (in.val == pttlNoExpiry) != s.noExp {
			return nil
		}
		if left := max(in.val, 1); in.val != pttlNoExpiry && (s.x < p+left-r.tol || s.x > in.ret+left+r.tol) {
			return nil // PTTL says the deadline is elsewhere
		}
		return []refState{s}
	}
	return nil
}
