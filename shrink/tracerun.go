package shrink

import (
	"context"
	"fmt"
	"os"
	"slices"
	"time"

	"github.com/lockcheck/lockcheck/harness"
	"github.com/lockcheck/lockcheck/reports"
	"github.com/lockcheck/lockcheck/scenarios"
)

// try plays the trace of evs until a run does not show the kind or the
// shrink's tries (at most two: a script lines its race up itself) did,
// records the step, and keeps the trace (its first run's folder) when
// every run showed it; it says whether it did. A cut whose run recorded
// more than maxOps operations (when set) is dropped too: a step begun
// too soon retries its acquire until granted, and a reproducer is
// measured in operations.
func (ts *traceStage) try(evs []scenarios.TraceEvent, what string, maxOps int) bool {
	sh := ts.sh
	scenarios.SortEvents(ts.h, evs)
	tr, err := scenarios.NewTrace(ts.s, ts.h, ts.key, evs)
	if err != nil {
		fmt.Fprintf(sh.o.Progress, "  %s %s: %v: dropped\n", sh.clock(), what, err)
		return false
	}
	began := time.Now()
	step := reports.ShrinkStep{What: what}
	var c traced
	tries := min(sh.o.Tries, 2)
	for step.Runs < tries {
		r, err := sh.runTrace(ts.ctx, tr)
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
	ts.res.Steps = append(ts.res.Steps, step)
	verdict := "dropped"
	if ok {
		verdict = fmt.Sprintf("kept, %d steps, %s", len(tr.Steps), c.size)
	}
	if step.Error != "" {
		verdict = step.Error + ": " + verdict
	}
	fmt.Fprintf(sh.o.Progress, "  %s %s: %d of %d showed %s: %s\n", sh.clock(), what, step.Reproduced, step.Runs, sh.o.Kind, verdict)
	if ok {
		ts.kept = append(ts.kept, c)
	}
	return ok
}

// runTrace plays tr once into a fresh folder under tries/.
func (sh *shrinker) runTrace(ctx context.Context, tr scenarios.Trace) (runOutcome, error) {
	dir := sh.tryDir()
	began := time.Now()
	out, err := harness.ExecuteTrace(ctx, sh.eng, tr, harness.Options{Out: dir, Sources: sh.o.Sources, Replay: scenarios.ReplayCommand(sh.o.Out)})
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
