package shrink

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/lockcheck/lockcheck/history"
	"github.com/lockcheck/lockcheck/reports"
	"github.com/lockcheck/lockcheck/scenarios"
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
// turn, kept when every play of it still shows the kind. It stops while
// the budget still holds the confirmation of the smallest kept (wall,
// until one is kept, is the scenario run's time); it returns the traces
// kept, smallest last (none when even the first did not show the kind),
// and why the search ended.
//
// The cuts, in order: every freeze inside a call and every wait of a
// second or more dropped together (two short plays when the kind still
// shows, and short plays from then on: a long wait makes every later
// play slow, and a step recorded long after a fault began often waited
// for the workload, not for the fault); then each of them, the longest
// first; each step the finding does not name left out, latest first (the
// steps after the race are the likeliest not to matter); each step that
// still waits begun at once, each call still frozen inside played
// without its freeze.
func (sh *shrinker) traceSearch(ctx context.Context, s scenarios.Scenario, dir string, wall time.Duration, res *reports.Shrunk) ([]traced, string) {
	h, f, err := violation(dir, sh.o.Kind)
	if err != nil {
		fmt.Fprintf(sh.o.Progress, "  %s script form: %v: skipped\n", sh.clock(), err)
		return nil, ""
	}
	ts := &traceStage{sh: sh, ctx: ctx, s: s, h: h, key: f.Key, wall: wall, res: res, tried: map[string]bool{}}
	core, narrow, wide := traceEvents(h, f, sh.o.Kind, s.TTL)
	if !ts.first(narrow, wide) {
		return nil, ts.ended()
	}
	ts.dropLong()
	if !ts.unfreeze(1000) || !ts.atOnce(1000) || !ts.leaveOut(core) {
		return ts.kept, ts.ended()
	}
	if ts.atOnce(1) {
		ts.unfreeze(1)
	}
	return ts.kept, ts.ended()
}

// traceStage is the script-form stage's state: the run it cuts (its
// scenario, history and the finding's key), the traces kept, smallest
// last, and the cuts' names tried.
type traceStage struct {
	sh  *shrinker
	ctx context.Context
	s   scenarios.Scenario
	h   *history.History
	key string
	// wall is how long the latest kept trace's run took (until one is
	// kept, the scenario run's).
	wall  time.Duration
	res   *reports.Shrunk
	kept  []traced
	tried map[string]bool
}

// best is the smallest trace kept.
func (ts *traceStage) best() traced { return ts.kept[len(ts.kept)-1] }

// room says whether the budget still holds a try and the confirmation
// after it, and ctx has not ended.
func (ts *traceStage) room() bool {
	if len(ts.kept) > 0 {
		ts.wall = ts.best().wall
	}
	return ts.ctx.Err() == nil && ts.sh.roomFor(ts.wall)
}

// ended says why the search ended.
func (ts *traceStage) ended() string {
	if ts.ctx.Err() != nil {
		return "interrupted"
	}
	if !ts.room() {
		return "budget"
	}
	return "no step of the script left to cut"
}

// first tries the narrow trace, then the wide one, and says whether one
// was kept.
func (ts *traceStage) first(narrow, wide []scenarios.TraceEvent) bool {
	for _, first := range []struct {
		what string
		evs  []scenarios.TraceEvent
	}{{"script of the steps around the violation", narrow}, {"script of every call on the key before it", wide}} {
		if !ts.room() {
			return false
		}
		if ts.try(first.evs, first.what, 0) {
			return true
		}
	}
	return false
}

// dropLong tries every freeze inside a call and every wait of a second or
// more dropped at once, when the budget holds the shorter plays.
func (ts *traceStage) dropLong() {
	if ts.ctx.Err() != nil {
		return
	}
	best := ts.best()
	evs, saved := slices.Clone(best.events), time.Duration(0)
	for i, st := range best.tr.Steps {
		if st.PauseMs >= 1000 {
			evs[i].Unfrozen, saved = true, saved+time.Duration(st.PauseMs)*time.Millisecond
		}
		if st.DelayMs >= 1000 {
			evs[i].AtOnce, saved = true, saved+time.Duration(st.DelayMs)*time.Millisecond
		}
	}
	if saved > 0 && ts.sh.roomFor(max(best.wall-saved, best.wall/10)) {
		ts.try(evs, "script with every freeze and wait of a second or more dropped", best.size.Ops)
	}
}

// atOnce tries each step that waits at least least ms begun at once.
func (ts *traceStage) atOnce(least int64) bool {
	delay := func(st scenarios.TraceStep) int64 { return st.DelayMs }
	return ts.cut("at once", delay, least, func(e *scenarios.TraceEvent) { e.AtOnce = true })
}

// unfreeze tries each call frozen inside for at least least ms played
// without its freeze.
func (ts *traceStage) unfreeze(least int64) bool {
	pause := func(st scenarios.TraceStep) int64 { return st.PauseMs }
	return ts.cut("not frozen inside", pause, least, func(e *scenarios.TraceEvent) { e.Unfrozen = true })
}

// cut tries, one step at a time, the steps that weigh (most first) no
// less than least, each with set applied; what names the cut. It says
// false when the budget ran out first.
func (ts *traceStage) cut(what string, weigh func(scenarios.TraceStep) int64, least int64, set func(*scenarios.TraceEvent)) bool {
	steps := ts.best().tr.Steps
	order := make([]int, 0, len(steps))
	for i, st := range steps {
		if w := weigh(st); w >= least && w > 0 {
			order = append(order, i)
		}
	}
	slices.SortStableFunc(order, func(a, b int) int { return int(weigh(steps[b]) - weigh(steps[a])) })
	for _, i := range order {
		best := ts.best()
		e := best.events[i]
		name := fmt.Sprintf("script with %s %s", describe(ts.h, e), what)
		if ts.tried[name] {
			continue
		}
		ts.tried[name] = true
		if !ts.room() {
			return false
		}
		evs := slices.Clone(best.events)
		set(&evs[i])
		ts.try(evs, name, best.size.Ops)
	}
	return true
}

// leaveOut tries each step of the first trace kept left out, latest
// first, but for the operations the finding names (core) and the
// acquires whose token a later step uses. It says false when the budget
// ran out first.
func (ts *traceStage) leaveOut(core map[int]bool) bool {
	first := ts.kept[0].events
	for i := len(first) - 1; i >= 0; i-- {
		best := ts.best()
		e := first[i]
		at := slices.IndexFunc(best.events, func(x scenarios.TraceEvent) bool { return x.IsOp == e.IsOp && x.Op == e.Op && x.Fault == e.Fault })
		if at < 0 || e.IsOp && (core[e.Op] || givesToken(ts.h, best.events, at)) {
			continue
		}
		if !ts.room() {
			return false
		}
		evs := slices.Delete(slices.Clone(best.events), at, at+1)
		ts.try(evs, "script without "+describe(ts.h, e), best.size.Ops)
	}
	return true
}
