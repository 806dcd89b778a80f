package harness

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/lockcheck/lockcheck/checker"
	"github.com/lockcheck/lockcheck/history"
	"github.com/lockcheck/lockcheck/history/historyjson"
	"github.com/lockcheck/lockcheck/reports"
	"github.com/lockcheck/lockcheck/scenarios"
	"github.com/lockcheck/lockcheck/scenarios/fault"
)

// traced is a trace that showed the kind, with its first run's folder.
type traced struct {
	events []scenarios.TraceEvent
	tr     scenarios.Trace
	dir    string
	size   reports.Size
	wall   time.Duration
}

// traceSearch is the script-form stage of a shrink: from the run in dir
// (the smallest scenario kept), the trace of only the steps around its
// first violation of the kind (the holds or operations the finding
// names, the calls on its key that changed the lock since a lease
// before it, the tokens those calls use, the fault steps before it),
// then each step played without its freeze or its wait, or left out, in
// turn, kept when every play of it still shows the kind. It stops while the budget still holds the
// confirmation of the smallest kept (wall, until one is kept, is the
// scenario run's time); it returns the traces kept, smallest last (none
// when even the first did not show the kind), and why the search ended.
func (sh *shrinker) traceSearch(ctx context.Context, s scenarios.Scenario, dir string, wall time.Duration, res *reports.Shrunk) ([]traced, string) {
	h, f, err := violation(dir, sh.o.Kind)
	if err != nil {
		fmt.Fprintf(sh.o.Progress, "  %s script form: %v: skipped\n", sh.clock(), err)
		return nil, ""
	}
	var kept []traced
	room := func() bool {
		if len(kept) > 0 {
			wall = kept[len(kept)-1].wall
		}
		return ctx.Err() == nil && sh.roomFor(wall)
	}
	ended := func() string {
		if ctx.Err() != nil {
			return "interrupted"
		}
		if !room() {
			return "budget"
		}
		return "no step of the script left to cut"
	}
	core, narrow, wide := traceEvents(h, f, sh.o.Kind, s.WithDefaults().TTL)
	for _, first := range []struct {
		what string
		evs  []scenarios.TraceEvent
	}{{"script of the steps around the violation", narrow}, {"script of every call on the key before it", wide}} {
		if !room() {
			return nil, ended()
		}
		if c, ok := sh.tryTrace(ctx, s, h, f.Key, first.evs, first.what, 0, res); ok {
			kept = append(kept, c)
			break
		}
	}
	if len(kept) == 0 {
		return nil, ended()
	}
	// cut tries, one step at a time, the steps that weigh (most first) no
	// less than least, each with set applied; what names the cut.
	tried := map[string]bool{}
	cut := func(what string, weigh func(scenarios.TraceStep) int64, least int64, set func(*scenarios.TraceEvent)) bool {
		steps := kept[len(kept)-1].tr.Steps
		order := make([]int, 0, len(steps))
		for i, st := range steps {
			if w := weigh(st); w >= least && w > 0 {
				order = append(order, i)
			}
		}
		slices.SortStableFunc(order, func(a, b int) int { return int(weigh(steps[b]) - weigh(steps[a])) })
		for _, i := range order {
			best := kept[len(kept)-1]
			e := best.events[i]
			name := fmt.Sprintf("script with %s %s", describe(h, e), what)
			if tried[name] {
				continue
			}
			tried[name] = true
			if !room() {
				return false
			}
			evs := slices.Clone(best.events)
			set(&evs[i])
			if c, ok := sh.tryTrace(ctx, s, h, f.Key, evs, name, best.size.Ops, res); ok {
				kept = append(kept, c)
			}
		}
		return true
	}
	delay := func(st scenarios.TraceStep) int64 { return st.DelayMs }
	atOnce := func(least int64) bool {
		return cut("at once", delay, least, func(e *scenarios.TraceEvent) { e.AtOnce = true })
	}
	unfreeze := func(least int64) bool {
		return cut("not frozen inside", func(st scenarios.TraceStep) int64 { return st.PauseMs }, least, func(e *scenarios.TraceEvent) { e.Unfrozen = true })
	}
	// The cuts, in order. Every freeze inside a call and every wait of a
	// second or more dropped together (two short plays when the kind
	// still shows, and short plays from then on: a long wait makes every
	// later play slow, and a step recorded long after a fault began often
	// waited for the workload, not for the fault); then each of them, the
	// longest first; each step the finding does not name left out, latest
	// first (the steps after the race are the likeliest not to matter);
	// each step that still waits begun at once, each call still frozen
	// inside played without its freeze.
	if best := kept[len(kept)-1]; ctx.Err() == nil {
		evs, saved := slices.Clone(best.events), time.Duration(0)
		for i, st := range best.tr.Steps {
			if st.PauseMs >= 1000 {
				evs[i].Unfrozen, saved = true, saved+time.Duration(st.PauseMs)*time.Millisecond
			}
			if st.DelayMs >= 1000 {
				evs[i].AtOnce, saved = true, saved+time.Duration(st.DelayMs)*time.Millisecond
			}
		}
		if saved > 0 && sh.roomFor(max(best.wall-saved, best.wall/10)) {
			if c, ok := sh.tryTrace(ctx, s, h, f.Key, evs, "script with every freeze and wait of a second or more dropped", best.size.Ops, res); ok {
				kept = append(kept, c)
			}
		}
	}
	if !unfreeze(1000) || !atOnce(1000) {
		return kept, ended()
	}
	first := kept[0].events
	for i := len(first) - 1; i >= 0; i-- {
		best := kept[len(kept)-1]
		e := first[i]
		at := slices.IndexFunc(best.events, func(x scenarios.TraceEvent) bool { return x.IsOp == e.IsOp && x.Op == e.Op && x.Fault == e.Fault })
		if at < 0 || e.IsOp && (core[e.Op] || givesToken(h, best.events, at)) {
			continue
		}
		if !room() {
			return kept, ended()
		}
		evs := slices.Delete(slices.Clone(best.events), at, at+1)
		if c, ok := sh.tryTrace(ctx, s, h, f.Key, evs, "script without "+describe(h, e), best.size.Ops, res); ok {
			kept = append(kept, c)
		}
	}
	if atOnce(1) {
		unfreeze(1)
	}
	return kept, ended()
}

// tryTrace plays the trace of evs until a run does not show the kind or
// the shrink's tries (at most two: a script lines its race up itself)
// did; it says whether every run showed it, keeping the first run's
// folder. A cut whose run recorded more than maxOps operations (when
// set) is dropped too: a step begun too soon retries its acquire until
// granted, and a reproducer is measured in operations.
func (sh *shrinker) tryTrace(ctx context.Context, s scenarios.Scenario, h *history.History, key string, evs []scenarios.TraceEvent, what string, maxOps int, res *reports.Shrunk) (traced, bool) {
	scenarios.SortEvents(h, evs)
	tr, err := scenarios.NewTrace(s, h, key, evs)
	if err != nil {
		fmt.Fprintf(sh.o.Progress, "  %s %s: %v: dropped\n", sh.clock(), what, err)
		return traced{}, false
	}
	began := time.Now()
	step := reports.ShrinkStep{What: what}
	var c traced
	tries := min(sh.o.Tries, 2)
	for step.Runs < tries {
		r, err := sh.runTrace(ctx, tr)
		step.Runs++
		if err != nil {
			step.Error = err.Error()
			break
		}
		if !r.shown {
			os.RemoveAll(r.dir)
			break
		}
		step.Reproduced++
		if c.dir == "" {
			c = traced{events: evs, tr: tr, dir: r.dir, size: r.size, wall: r.wall}
		} else {
			os.RemoveAll(r.dir)
		}
	}
	ok := step.Reproduced == tries
	grew := ok && maxOps > 0 && c.size.Ops > maxOps
	if grew {
		ok = false
		step.Error = fmt.Sprintf("%d operations, more than the %d of the script it cuts", c.size.Ops, maxOps)
	}
	if !ok && c.dir != "" {
		os.RemoveAll(c.dir)
	}
	step.Kept, step.Seconds = ok, time.Since(began).Seconds()
	if ok {
		step.Size = &c.size
	}
	res.Steps = append(res.Steps, step)
	verdict := "dropped"
	if ok {
		verdict = fmt.Sprintf("kept, %d steps, %s", len(tr.Steps), c.size)
	}
	if step.Error != "" {
		verdict = step.Error + ": " + verdict
	}
	fmt.Fprintf(sh.o.Progress, "  %s %s: %d of %d showed %s: %s\n", sh.clock(), what, step.Reproduced, step.Runs, sh.o.Kind, verdict)
	return c, ok
}

// runTrace plays tr once into a fresh folder under tries/.
func (sh *shrinker) runTrace(ctx context.Context, tr scenarios.Trace) (runOutcome, error) {
	sh.runs++
	dir := filepath.Join(sh.o.Out, "tries", fmt.Sprintf("%03d", sh.runs))
	began := time.Now()
	out, err := ExecuteTrace(ctx, sh.eng, tr, Options{Out: dir, Sources: sh.o.Sources, Replay: ReplayCommand(sh.o.Out)})
	if err != nil {
		os.RemoveAll(dir)
		return runOutcome{}, err
	}
	if out.Interrupted {
		os.RemoveAll(dir)
		return runOutcome{}, context.Canceled
	}
	r := runOutcome{candidate: candidate{dir: dir, size: reports.SizeOf(out.Result), wall: time.Since(began)}}
	r.shown = slices.Contains(out.Check.Checks.FailingKinds(), sh.o.Kind)
	return r, nil
}

// roomFor says whether the budget holds one more try of two runs of
// wall and the confirmation after it, with a fifth to spare.
func (sh *shrinker) roomFor(wall time.Duration) bool {
	need := wall * time.Duration(2+sh.o.Confirm) * 6 / 5
	return time.Since(sh.start)+need <= sh.o.Budget
}

// confirmTrace plays the smallest kept trace Confirm times, falling back
// to the one kept before it while a trace cannot reach Need, until the
// budget ends.
func (sh *shrinker) confirmTrace(ctx context.Context, kept []traced) (*traced, int, int) {
	until := sh.start.Add(sh.o.Budget)
	o := sh.o
	for k := len(kept) - 1; k >= 0 && ctx.Err() == nil; k-- {
		c := kept[k]
		shown, runs := 0, 0
		var first *traced
		for runs < o.Confirm && shown+(o.Confirm-runs) >= o.Need && time.Now().Before(until) {
			r, err := sh.runTrace(ctx, c.tr)
			if err != nil && ctx.Err() != nil {
				break
			}
			if err != nil {
				fmt.Fprintf(o.Progress, "  %s confirm the script: %v\n", sh.clock(), err)
			}
			runs++
			if err == nil && r.shown {
				shown++
				if first == nil {
					t := c
					t.dir, t.size = r.dir, r.size
					first = &t
					continue
				}
			}
			if err == nil {
				os.RemoveAll(r.dir)
			}
			fmt.Fprintf(o.Progress, "  %s confirm the script (%d steps): %d of %d showed %s\n", sh.clock(), len(c.tr.Steps), shown, runs, o.Kind)
		}
		if shown >= o.Need {
			return first, shown, runs
		}
		if first != nil {
			os.RemoveAll(first.dir)
		}
		if !time.Now().Before(until) {
			break
		}
	}
	return nil, 0, 0
}

// givesToken says whether events[at] is an acquire whose token a later
// step of its worker uses (an extend, release or write before the
// worker's next acquire): a call made with a token must have taken it,
// or the script shows something no client does.
func givesToken(h *history.History, events []scenarios.TraceEvent, at int) bool {
	a := h.Ops[events[at].Op]
	if a.Kind != history.Acquire {
		return false
	}
	for _, e := range events[at+1:] {
		if !e.IsOp || h.Ops[e.Op].Worker != a.Worker {
			continue
		}
		return h.Ops[e.Op].Kind != history.Acquire
	}
	return false
}

// violation loads the history of the run in dir and its first failing
// finding of kind (the one that ended first).
func violation(dir, kind string) (*history.History, checker.Finding, error) {
	rr, err := reports.LoadRunResult(filepath.Join(dir, "result.json"))
	if err != nil {
		return nil, checker.Finding{}, err
	}
	var f *checker.Finding
	for _, c := range rr.Checks {
		for i := range c.Findings {
			g := &c.Findings[i]
			if string(g.Kind) == kind && !g.Allowed && (f == nil || g.End < f.End) {
				f = g
			}
		}
	}
	if f == nil {
		return nil, checker.Finding{}, fmt.Errorf("%s shows no %s finding", dir, kind)
	}
	h, err := historyjson.Load(filepath.Join(dir, "history.json"))
	if err != nil {
		return nil, checker.Finding{}, err
	}
	return h, *f, nil
}

// traceEvents picks the events a trace of f is made of. core are the
// operations f names (the holds' acquires and extends, or its Ops).
// narrow adds the calls on f's key that may have changed the lock (not
// refused) from a lease before the first of them until f ended, the
// acquire whose token each of those calls uses, and the fault windows
// that started before f ended (not a pause of a workload's holder: the
// delays between the frozen holder's steps play it); wide is every call on the key until then
// that was not refused, with the same faults. Writes come in only for a
// finding about the resource, reads of the key only for one about leases.
func traceEvents(h *history.History, f checker.Finding, kind string, ttl time.Duration) (core map[int]bool, narrow, wide []scenarios.TraceEvent) {
	core = map[int]bool{}
	for _, hd := range f.Holds {
		core[hd.Acquire] = true
		if hd.Extend > 0 {
			core[hd.Extend] = true
		}
	}
	for _, r := range f.Ops {
		core[r.Index] = true
	}
	lo := f.Start
	for i := range core {
		if i >= 0 && i < len(h.Ops) {
			lo = min(lo, h.Ops[i].Call)
		}
	}
	lo -= int64(ttl)
	wants := func(op *history.Op) bool {
		switch op.Kind {
		case history.Acquire, history.Extend, history.Release:
			return true
		case history.Write:
			return resourceKinds[kind]
		case history.Observe:
			return leaseKinds[kind]
		}
		return false
	}
	inNarrow := map[int]bool{}
	lastAcquire := map[int]int{} // worker -> its latest OK acquire so far
	for i := range h.Ops {
		op := &h.Ops[i]
		if op.Key != f.Key || op.Call > f.End || !wants(op) {
			continue
		}
		changes := op.Outcome != history.Fail || core[i]
		if changes {
			wide = append(wide, scenarios.OpEvent(i))
		}
		if changes && (op.Call >= lo || core[i]) {
			inNarrow[i] = true
			if op.Kind != history.Acquire && op.Worker >= 0 {
				if a, ok := lastAcquire[op.Worker]; ok {
					inNarrow[a] = true
				}
			}
		}
		if op.Kind == history.Acquire && op.Outcome != history.Fail {
			lastAcquire[op.Worker] = i
		}
	}
	for i := range h.Ops {
		if inNarrow[i] {
			narrow = append(narrow, scenarios.OpEvent(i))
		}
	}
	for i, w := range h.Faults {
		if w.Start <= f.End && !fault.NeedsWorkload(w.Name) {
			narrow = append(narrow, scenarios.FaultEvent(i))
			wide = append(wide, scenarios.FaultEvent(i))
		}
	}
	return core, narrow, wide
}

// resourceKinds and leaseKinds are the findings about the resource and
// about leases: their traces keep the writes, and the reads of the key.
var (
	resourceKinds = map[string]bool{string(checker.KindLostIncrement): true, string(checker.KindFenceNotIncreasing): true,
		string(checker.KindWriteOverHolder): true, string(checker.KindStaleWrite): true, string(checker.KindDuplicateFence): true}
	leaseKinds = map[string]bool{string(checker.KindNoExpiry): true, string(checker.KindWrongLease): true, string(checker.KindStuck): true}
)

// describe names an event for the shrink's progress and shrink.json.
func describe(h *history.History, e scenarios.TraceEvent) string {
	if !e.IsOp {
		return "fault step " + h.Faults[e.Fault].Name
	}
	op := h.Ops[e.Op]
	return fmt.Sprintf("worker %d's %s at %.2f s", op.Worker, op.Kind, float64(op.Call)/1e9)
}
