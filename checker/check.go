package checker

import (
	"context"
	"fmt"
	"runtime"
	"runtime/debug"
	"sync"
	"sync/atomic"

	"github.com/lockcheck/lockcheck/history"
)

// Run runs every check on h. It returns an error only for a history it
// cannot interpret (or options that make no sense): a bad input, not a
// verdict. The history is not modified.
func Run(ctx context.Context, h *history.History, opts Options) (*Result, error) {
	opts, err := opts.ready()
	if err != nil {
		return nil, err
	}
	if err := validate(h); err != nil {
		return nil, fmt.Errorf("check history: %w", err)
	}
	var sum summary
	for i := range h.Ops {
		sum.add(&h.Ops[i])
	}
	sum.end = max(sum.end, h.End())
	p := checkPart(ctx, h, opts, sum, wholeSet(h))
	res := p.result(opts, sum)
	res.judgeFaults(h, sum.end)
	explainAll(res, h.Faults)
	return res, nil
}

// ready fills the options' defaults.
func (o Options) ready() (Options, error) {
	o, err := o.withDefaults()
	if err != nil {
		return o, fmt.Errorf("checker options: %w", err)
	}
	if o.Workers <= 0 {
		o.Workers = runtime.GOMAXPROCS(0)
	}
	return o, nil
}

// summary is what the checks need to know of the whole history before
// they look at any one key: RunFile learns it in a first pass.
type summary struct {
	ops int
	// end is the history's last instant (History.End).
	end int64
	// workers: the history names workers (else holders are told apart by
	// client id).
	workers bool
	// has marks, by checkID, the checks with needs that some operation
	// meets.
	has uint64
}

func (s *summary) add(op *history.Op) {
	s.ops++
	s.end = max(s.end, op.Return, op.Call)
	s.workers = s.workers || op.Worker != 0
	if s.has != needyAll {
		for _, id := range needy {
			if s.has&(1<<id) == 0 && checkTable[id].needs(op) {
				s.has |= 1 << id
			}
		}
	}
}

// lacks says whether the history has nothing the check judges.
func (s *summary) lacks(id checkID) bool {
	return checkTable[id].needs != nil && s.has&(1<<id) == 0
}

// part is what the checks found on some of a history's keys; parts of
// different keys merge (RunFile checks a group of keys at a time).
type part struct {
	keys, segs int
	found      byCheck
	holds      []Hold
	heldTotal  map[string]int
	writes     []history.Op
	lin        linPart
	notice     noticePart
	linRan     bool
}

// chunkSet says which part of a history checkPart is given: h's first
// own operations, each h.Ops[i] being operation idx[i] of the history
// (idx nil: h is the whole history), their keys' carries from earlier
// chunks (nil, or a key missing: none), and the cut where they continue
// (never: this is their last chunk). A key that is checked in chunks
// gives its holds and writes to sink instead of keeping the ones shown.
type chunkSet struct {
	own     int
	idx     []int32
	carries map[string]*keyCarry
	cut     int64
	sink    func(key string, holds []Hold, writes []history.Op, losses []Loss)
}

// wholeSet is the chunkSet of a whole history.
func wholeSet(h *history.History) chunkSet { return chunkSet{own: len(h.Ops), cut: never} }

// checkPart runs every check on the keys of h, which may hold only some
// of a history's keys, or a chunk of one (cs); sum describes the whole
// history.
func checkPart(ctx context.Context, h *history.History, opts Options, sum summary, cs chunkSet) *part {
	x := newPartCheck(ctx, h, opts, sum, groupByKey(h, cs.own))
	outs := x.checkKeys(cs)
	p := &part{keys: len(x.keys), found: newByCheck(nil, opts.MaxFindings)}
	for i := range outs {
		p.found.merge(outs[i].found)
		x.segs = append(x.segs, outs[i].segs...)
	}
	p.segs = len(x.segs)
	for i := range checkTable {
		if r := &checkTable[i]; r.acrossKeys != nil {
			r.acrossKeys(x, p, &p.found[i])
		}
	}
	p.keep(h, x.keys, outs, cs)
	return p
}

// keyOut is what the per-key checks found on one key.
type keyOut struct {
	segs   []segment
	holds  []Hold
	losses []Loss
	found  byCheck
}

// checkKeys runs each row's perKey on every key, in parallel.
func (x *partCheck) checkKeys(cs chunkSet) []keyOut {
	n := len(checkTable)
	outs := make([]keyOut, len(x.keys))
	backing := make([]findings, len(x.keys)*n)
	parallelWorkers(len(x.keys), x.opts.Workers, func() (func(int), func()) {
		// One keyCheck per goroutine, for key after key: the rows are
		// called through function values, so what they are handed lives
		// on the heap, and one per key would be allocations per key.
		kc := &keyCheck{partCheck: x}
		return func(ki int) {
			outs[ki].found = newByCheck(backing[ki*n:], x.opts.MaxFindings)
			kc.check(x.keys[ki], ki, cs, &outs[ki])
		}, func() {}
	})
	return outs
}

// check runs every row's perKey on k, the part's key ki, into o.
func (x *keyCheck) check(k *keyOps, ki int, cs chunkSet, o *keyOut) {
	carry := cs.carries[k.name]
	if carry == nil {
		x.own = keyCarry{}
		carry = &x.own
	}
	x.chunk = chunkCtx{carry: carry, idx: cs.idx, cut: cs.cut}
	x.k, x.cc, x.found = k, &x.chunk, o.found
	k.prepare(x.h, carry)
	o.segs = segments(x.h, k, ki, x.loss, x.counterLoss, x.tol, x.cc)
	o.holds = holdsOf(x.h, k, x.end, x.byClient, x.cc)
	o.losses = lossesOf(x.h, k, x.end, x.byClient, x.cc)
	x.holds = o.holds
	for i := range checkTable {
		if r := &checkTable[i]; r.perKey != nil {
			r.perKey(x, &o.found[i])
		}
	}
	carryUnknown(x.h, k, x.cc)
	if cs.cut != never {
		carry.lastToken = make(map[int]string, len(k.last))
		for w, t := range k.last {
			carry.lastToken[w] = k.tokens[t]
		}
	}
}

// keep keeps what a report draws of each key (its shown holds and the
// writes inside them, around its first finding), or hands a key checked
// in chunks to cs.sink.
func (p *part) keep(h *history.History, keys []*keyOps, outs []keyOut, cs chunkSet) {
	first := p.firstFindings()
	p.heldTotal = map[string]int{}
	for i, k := range keys {
		if carry := cs.carries[k.name]; carry != nil {
			carry.chunk++
		}
		holds := outs[i].holds
		p.notice.add(outs[i].losses)
		if cs.sink != nil && (cs.cut != never || cs.carries[k.name] != nil && cs.carries[k.name].chunk > 1) {
			sortHolds(holds)
			if cs.idx != nil {
				for j := range holds {
					renumberHold(&holds[j], cs.idx)
				}
			}
			cs.sink(k.name, holds, shownWrites(h, k, nil, -1), outs[i].losses)
			outs[i] = keyOut{}
			continue
		}
		at, found := first[k.name]
		holds = shownHolds(holds, at, found)
		p.notice.show(outs[i].losses, holds)
		p.heldTotal[k.name] = len(outs[i].holds)
		p.holds = append(p.holds, holds...)
		p.writes = append(p.writes, shownWrites(h, k, holds, ShownHolds)...)
		outs[i] = keyOut{}
	}
}

// merge adds q's findings, holds and segments to p's.
func (p *part) merge(q *part) {
	p.keys += q.keys
	p.segs += q.segs
	p.found.merge(q.found)
	p.holds = append(p.holds, q.holds...)
	p.writes = append(p.writes, q.writes...)
	for k, n := range q.heldTotal {
		p.heldTotal[k] = n
	}
	p.lin.merge(&q.lin)
	p.notice.merge(&q.notice)
	p.linRan = p.linRan || q.linRan
}

// result turns the merged findings into the checks and the verdict.
func (p *part) result(opts Options, sum summary) *Result {
	res := &Result{Ops: sum.ops, Keys: p.keys, Options: opts, Holds: p.holds, HeldTotal: p.heldTotal, Writes: p.writes,
		Segments: p.segs, Porcupine: p.lin.porcupine, Picture: p.lin.pic}
	res.Notice = p.notice.result()
	for i := range checkTable {
		res.Checks = append(res.Checks, p.check(checkID(i), opts, sum))
	}
	res.decide()
	return res
}

// check is one check's outcome: skipped when the options say so or the
// history has nothing it judges, else as its row decides, else its
// findings counted.
func (p *part) check(id checkID, opts Options, sum summary) Check {
	r := &checkTable[id]
	switch {
	case opts.skips(r.name):
		return Check{Name: r.name, Status: Skipped, Summary: "skipped by options"}
	case sum.lacks(id):
		return Check{Name: r.name, Status: Skipped, Summary: r.idle}
	case r.decide != nil:
		return r.decide(p, &p.found[id], opts)
	}
	return p.found[id].check(r.name, r.noun)
}

// Holds computes the hold intervals of every key of h (see Hold), keys in
// name order, each key's in acquire order. Run returns them too.
func Holds(h *history.History) []Hold {
	var out []Hold
	end, byClient := h.End(), !workersSet(h)
	cs := wholeSet(h)
	for _, k := range groupByKey(h, cs.own) {
		k.prepare(h, nil)
		out = append(out, holdsOf(h, k, end, byClient, &chunkCtx{carry: &keyCarry{}, cut: never})...)
	}
	return out
}

// workersSet says whether the history names workers; if not, holders are
// told apart by client id.
func workersSet(h *history.History) bool {
	for i := range h.Ops {
		if h.Ops[i].Worker != 0 {
			return true
		}
	}
	return false
}

// widen extends each window's end by span.
func widen(ws lossWindows, span int64) lossWindows {
	out := make(lossWindows, len(ws))
	for i, w := range ws {
		out[i] = window{w.start, satAdd(w.end, span)}
	}
	return out
}

// parallel calls f(0..n-1) on up to workers goroutines.
func parallel(n, workers int, f func(i int)) {
	parallelWorkers(n, workers, func() (func(int), func()) { return f, func() {} })
}

// parallelWorkers calls jobs 0..n-1 on up to workers goroutines. Each
// goroutine gets its job function and a finish function from newWorker, so
// it can keep state between its jobs (search buffers, local results) and
// hand it over once at the end.
func parallelWorkers(n, workers int, newWorker func() (job func(i int), finish func())) {
	workers = max(1, min(workers, n))
	var next atomic.Int64
	var wg sync.WaitGroup
	var p panics
	defer p.rethrow()
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer p.catch()
			job, finish := newWorker()
			for {
				i := int(next.Add(1) - 1)
				if i >= n {
					break
				}
				job(i)
			}
			finish()
		}()
	}
	wg.Wait()
}

// panics carries a panic from the checker's goroutines to the goroutine
// that called it. Left in its own goroutine, a panic would end the process
// before the caller's deferred cleanup (a run's teardown of its containers).
type panics struct {
	once sync.Once
	v    any
}

// catch is deferred in each goroutine.
func (p *panics) catch() {
	if v := recover(); v != nil {
		p.once.Do(func() { p.v = fmt.Sprintf("checker: %v\n%s", v, debug.Stack()) })
	}
}

// rethrow is deferred by the caller, after the goroutines are waited for.
func (p *panics) rethrow() {
	if p.v != nil {
		panic(p.v)
	}
}
