package shrink

import (
	"fmt"
	"path/filepath"
	"time"

	"github.com/lockcheck/lockcheck/checker"
	"github.com/lockcheck/lockcheck/history"
	"github.com/lockcheck/lockcheck/history/historyjson"
	"github.com/lockcheck/lockcheck/reports"
	"github.com/lockcheck/lockcheck/scenarios"
	"github.com/lockcheck/lockcheck/scenarios/fault"
)

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
