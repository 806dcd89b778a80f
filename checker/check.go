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

// perKey is what the per-key checks found on one key.
type perKey struct {
	segs                                         []segment
	holds                                        []Hold
	losses                                       []Loss
	double, fence, resource, ttl, lost, rejected findings
}

// all are the findings in the order Run merges them.
func (o *perKey) all() [6]*findings {
	return [6]*findings{&o.double, &o.fence, &o.resource, &o.ttl, &o.lost, &o.rejected}
}

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
	// client id); fences, counterWrites: some operation has one.
	workers, fences, counterWrites bool
}

func (s *summary) add(op *history.Op) {
	s.ops++
	s.end = max(s.end, op.Return, op.Call)
	s.workers = s.workers || op.Worker != 0
	s.fences = s.fences || op.HasFence
	s.counterWrites = s.counterWrites || counterWrite(op)
}

// part is what the checks found on some of a history's keys; parts of
// different keys merge (RunFile checks a group of keys at a time).
type part struct {
	keys, segs int
	found      [6]findings
	holds      []Hold
	heldTotal  map[string]int
	writes     []history.Op
	lin        linPart
	linRan     bool
	notice     noticePart
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
	end := sum.end
	keys := groupByKey(h, cs.own)
	loss, counterLoss := newLossWindows(h, end, opts), newCounterLoss(h, end, opts)
	clockLoss := lossWindowsOf(h, end, opts, clockFault)
	faults := newFaultIndex(h, end)
	tol := int64(opts.ClockTolerance)
	byClient := !sum.workers

	outs := make([]perKey, len(keys))
	parallel(len(keys), opts.Workers, func(ki int) {
		k, o := keys[ki], &outs[ki]
		carry := cs.carries[k.name]
		if carry == nil {
			carry = &keyCarry{}
		}
		cc := &chunkCtx{carry: carry, idx: cs.idx, cut: cs.cut}
		for _, f := range o.all() {
			f.max = opts.MaxFindings
		}
		k.prepare(h, carry)
		o.segs = segments(h, k, ki, loss, counterLoss, tol, cc)
		o.holds = holdsOf(h, k, end, byClient, cc)
		o.losses = lossesOf(h, k, end, byClient, cc)
		doubleHolders(o.holds, byClient, faults, opts.AllowDoubleHolders, &o.double)
		fenceChecks(h, k, counterLoss, faults, &o.fence, &o.lost, cc)
		writesOverHolders(h, k, o.holds, loss, faults, &o.fence, &o.lost)
		lostIncrements(h, k, faults, &o.resource, cc)
		noExpiry(h, k, faults, &o.ttl)
		wrongLease(h, k, loss, tol, faults, &o.ttl)
		if opts.Majority {
			lateGrants(h, k, tol, faults, &o.ttl)
		} else {
			stuck(h, k, stuckExcused(loss, clockLoss, k.maxTTL, tol), tol, faults, &o.ttl, cc)
		}
		lostLocks(h, k, faults, &o.lost)
		rejectedCommands(h, k, faults, &o.rejected)
		carryUnknown(h, k, cc)
		if cs.cut != never {
			carry.lastToken = make(map[int]string, len(k.last))
			for w, t := range k.last {
				carry.lastToken[w] = k.tokens[t]
			}
		}
	})

	p := &part{keys: len(keys)}
	for i := range p.found {
		p.found[i].max = opts.MaxFindings
	}
	var segs []segment
	for i := range outs {
		o := &outs[i]
		for n, f := range o.all() {
			p.found[n].merge(f)
		}
		segs = append(segs, o.segs...)
	}
	p.segs = len(segs)
	if opts.Timeout >= 0 && !opts.skips(Linearizability) {
		m := &model{loss: loss, counterLoss: counterLoss, tol: tol}
		p.lin, p.linRan = linearizability(ctx, h, keys, segs, m, faults, opts), true
	}
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
			outs[i] = perKey{}
			continue
		}
		at, found := first[k.name]
		holds = shownHolds(holds, at, found)
		p.notice.show(outs[i].losses, holds)
		p.heldTotal[k.name] = len(outs[i].holds)
		p.holds = append(p.holds, holds...)
		p.writes = append(p.writes, shownWrites(h, k, holds, ShownHolds)...)
		outs[i] = perKey{}
	}
	return p
}

// merge adds q's findings, holds and segments to p's.
func (p *part) merge(q *part) {
	p.keys += q.keys
	p.segs += q.segs
	for i := range p.found {
		p.found[i].merge(&q.found[i])
	}
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
	all := &p.found
	checks := map[string]Check{
		DoubleHolder: all[0].check(DoubleHolder, "double holders"),
		Fence:        all[1].check(Fence, "fence violations"),
		Resource:     all[2].check(Resource, "lost increments"),
		TTL:          all[3].check(TTL, "leases wrong (no expiry, stuck, not as asked, granted late)"),
		LostLocks:    all[4].check(LostLocks, "lost-lock incidents"),
		Rejected:     all[5].check(Rejected, "lock commands rejected with an error"),
	}
	if !sum.fences {
		checks[Fence] = Check{Name: Fence, Status: Skipped, Summary: "no fenced operations in the history"}
	}
	if !sum.counterWrites {
		checks[Resource] = Check{Name: Resource, Status: Skipped, Summary: "no unfenced counter writes in the history"}
	}
	if p.linRan {
		checks[Linearizability] = p.lin.check(opts)
	} else {
		checks[Linearizability] = Check{Name: Linearizability, Status: Skipped, Summary: "skipped by options"}
	}
	for _, name := range CheckNames {
		c := checks[name]
		if opts.skips(name) {
			c = Check{Name: name, Status: Skipped, Summary: "skipped by options"}
		}
		res.Checks = append(res.Checks, c)
	}
	res.decide()
	return res
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

// stuckExcused are the instants at which a key still taken is not judged
// stuck: each loss window and the longest lease after it (a failover may
// keep a rolled-back lease), and after a clock fault three leases more: a
// clock that went forward by up to two leases and back again has stretched
// by as much every lease set while it was forward, which the server keeps.
func stuckExcused(loss, clock lossWindows, maxTTL, tol int64) lossWindows {
	return mergeWindows(append(widen(loss, satAdd(maxTTL, tol)), widen(clock, satAdd(3*maxTTL, tol))...))
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
