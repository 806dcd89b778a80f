package checker

import (
	"context"
	"sort"

	"github.com/lockcheck/lockcheck/history"
)

// groupCheck checks one group of keys read back from RunFile's spill: it
// takes the group's operations in call order and keeps each key's until
// they are checked, a chunk of a key at a time once the group holds more
// than its limit, so that a key of any length is checked in the memory of
// a chunk (keyCarry says what crosses a chunk's cut).
type groupCheck struct {
	ctx   context.Context
	opts  Options
	sum   summary
	head  *history.History
	limit int
	// maxTTL is each key's longest lease (RunFile's first pass).
	maxTTL  map[string]int64
	carries map[string]*keyCarry
	acc     map[string]*keyAcc
	order   []string // keys in the order they came
	held    int      // operations held in acc
	shown   *shownSpill
	all     *part
}

// anchorRoom is the room left after a key's operations for a chunk's
// anchors (attach), so that attaching them rarely copies the chunk.
const anchorRoom = 256

// chunksCut counts the chunks cut off keys, for tests.
var chunksCut int

// keyAcc is one key's operations not checked yet, in call order.
type keyAcc struct {
	ops []history.Op
	idx []int32
	// wait is how many operations the key must hold before it is cut
	// again, after a try found no cut.
	wait int
}

// add takes the next operation in call order.
func (g *groupCheck) add(op *history.Op, i int32) {
	a := g.acc[op.Key]
	if a == nil {
		a = &keyAcc{}
		g.acc[op.Key] = a
		g.order = append(g.order, op.Key)
	}
	a.ops = append(a.ops, *op)
	a.idx = append(a.idx, i)
	g.held++
	if g.held <= g.limit {
		return
	}
	var big string
	for _, k := range g.order {
		if a := g.acc[k]; len(a.ops) > a.wait && (big == "" || len(a.ops) > len(g.acc[big].ops)) {
			big = k
		}
	}
	if big != "" {
		g.cut(big)
	}
}

// carry is key's carry, made on first use.
func (g *groupCheck) carry(key string) *keyCarry {
	c := g.carries[key]
	if c == nil {
		c = &keyCarry{maxTTL: g.maxTTL[key], hasMaxTTL: true}
		g.carries[key] = c
	}
	return c
}

// cut checks key's operations up to the last cut among them and keeps
// the rest. With no cut among them (one long segment, or a belief that
// spans every cut), it waits until the key holds twice as many.
func (g *groupCheck) cut(key string) {
	a := g.acc[key]
	carry := g.carry(key)
	n := len(a.ops)
	// the chunk's anchors go after all of the key's operations, which
	// are kept whole; the checks see the first at only (chunkSet.own)
	h := &history.History{Meta: g.head.Meta, Faults: g.head.Faults, Ops: a.ops}
	idx := attach(h, a.idx, map[string]*keyCarry{key: carry})
	at := lastCut(h, n, carry, g.sum, g.opts)
	if at <= 0 {
		a.wait = 2 * n
		return
	}
	chunksCut++
	g.check(h, chunkSet{own: at, idx: idx, carries: map[string]*keyCarry{key: carry}, cut: h.Ops[at].Call, sink: g.shown.add})
	// the rest in arrays of the chunk's size: appending to them does not
	// double a chunk's memory
	rest := n - at
	a.ops = append(make([]history.Op, 0, max(rest, g.limit)+anchorRoom), a.ops[at:n]...)
	a.idx = append(make([]int32, 0, max(rest, g.limit)+anchorRoom), a.idx[at:n]...)
	a.wait = 0
	g.held -= at
}

// finish checks every key's remaining operations together.
func (g *groupCheck) finish() {
	if g.held == 0 {
		return
	}
	h := &history.History{Meta: g.head.Meta, Faults: g.head.Faults, Ops: make([]history.Op, 0, g.held)}
	cs := chunkSet{idx: make([]int32, 0, g.held), carries: map[string]*keyCarry{}, cut: never, sink: g.shown.add}
	for _, k := range g.order {
		a := g.acc[k]
		h.Ops = append(h.Ops, a.ops...)
		cs.idx = append(cs.idx, a.idx...)
		if c := g.carries[k]; c != nil {
			cs.carries[k] = c
		}
		delete(g.acc, k)
	}
	cs.own = len(h.Ops)
	g.order, g.held = nil, 0
	cs.idx = attach(h, cs.idx, cs.carries)
	g.check(h, cs)
}

// check checks one chunk set and merges what it found; the anchors of
// its carries are attached to h already.
func (g *groupCheck) check(h *history.History, cs chunkSet) {
	p := checkPart(g.ctx, h, g.opts, g.sum, cs)
	p.renumber(cs.idx)
	// the picture of a history that passes is its first segments'
	g.opts.failingPictureOnly = g.opts.failingPictureOnly || p.lin.pic != nil
	if g.all == nil {
		g.all = p
	} else {
		g.all.merge(p)
	}
}

// lastCut is the position of the last cut among h's first n operations
// (one key's, in call order; its carry's anchors after them), 0 when there
// is none. A cut is a segment's start (the lock certainly free, nothing
// open) that every worker's belief ended before: two workers sharing a
// token keep believing after the segmenter saw the token's lease end by
// the other's release, and a belief that ends exactly at the cut is ended
// by an operation of the next chunk.
func lastCut(h *history.History, n int, carry *keyCarry, sum summary, opts Options) int {
	keys := groupByKey(h, n)
	if len(keys) != 1 {
		return 0
	}
	k := keys[0]
	k.prepare(h, carry)
	loss, counterLoss := newLossWindows(h, sum.end, opts), newCounterLoss(h, sum.end, opts)
	probe := *carry // segments leaves its fence state in the carry
	cc := &chunkCtx{carry: &probe, cut: never}
	segs := segments(h, k, 0, loss, counterLoss, int64(opts.ClockTolerance), cc)
	if len(segs) < 2 {
		return 0
	}
	holds := holdsOf(h, k, sum.end, !sum.workers, cc)
	sortHolds(holds)
	// latest[i]: the latest end of holds[:i+1]
	latest := make([]int64, len(holds))
	for i := range holds {
		latest[i] = holds[i].End
		if i > 0 {
			latest[i] = max(latest[i], latest[i-1])
		}
	}
	for s := len(segs) - 1; s > 0; s-- {
		lo := int(segs[s].lo)
		if lo >= len(k.lock) {
			continue
		}
		c := k.lock[lo].call
		before := sort.Search(len(holds), func(i int) bool { return holds[i].Start >= c })
		if before == 0 || latest[before-1] < c {
			return int(k.lock[lo].op)
		}
	}
	return 0
}

// callOrder turns a group's operations, read in the order of the file,
// into call order: an operation comes out once every operation still to
// be read must be called after it. disorder bounds how far before the
// latest call seen so far an operation later in the file may be called
// (RunFile's first pass measures it), so only the operations of that
// stretch wait here.
type callOrder struct {
	disorder int64
	latest   int64
	started  bool
	q        opHeap
	// out is the operation handed out: one place for every operation,
	// rather than a copy each that escapes to the heap.
	out pending
}

type pending struct {
	op  history.Op
	idx int32
	pos int // position in the file: the order of equal calls
}

// opHeap is a binary heap of operations by call, then position. It is
// typed rather than container/heap's: boxing each operation in an
// interface was an allocation an operation, and a fifth of a long
// check's time with the collector's share.
type opHeap []pending

func (h opHeap) less(i, j int) bool {
	if h[i].op.Call != h[j].op.Call {
		return h[i].op.Call < h[j].op.Call
	}
	return h[i].pos < h[j].pos
}

func (h *opHeap) push(p pending) {
	q := append(*h, p)
	for i := len(q) - 1; i > 0; {
		parent := (i - 1) / 2
		if !q.less(i, parent) {
			break
		}
		q[i], q[parent] = q[parent], q[i]
		i = parent
	}
	*h = q
}

// pop moves the first operation to *to.
func (h *opHeap) pop(to *pending) {
	q := *h
	n := len(q) - 1
	*to = q[0]
	q[0] = q[n]
	q = q[:n]
	for i := 0; ; {
		m := 2*i + 1
		if m >= n {
			break
		}
		if r := m + 1; r < n && q.less(r, m) {
			m = r
		}
		if !q.less(m, i) {
			break
		}
		q[i], q[m] = q[m], q[i]
		i = m
	}
	*h = q
}

// push takes the next operation of the file and hands out, to emit,
// those that are now in call order.
func (c *callOrder) push(p *pending, emit func(*history.Op, int32)) {
	if !c.started || p.op.Call > c.latest {
		c.latest, c.started = p.op.Call, true
	}
	c.q.push(*p)
	for len(c.q) > 0 && c.q[0].op.Call < satSub(c.latest, c.disorder) {
		c.q.pop(&c.out)
		emit(&c.out.op, c.out.idx)
	}
}

// flush hands out the rest.
func (c *callOrder) flush(emit func(*history.Op, int32)) {
	for len(c.q) > 0 {
		c.q.pop(&c.out)
		emit(&c.out.op, c.out.idx)
	}
}

func satSub(a, b int64) int64 {
	if b > 0 && a < -1<<62 {
		return a
	}
	return a - b
}
