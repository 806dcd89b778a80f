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

// candidate is a scenario that showed the kind, with the folder of the
// run that did and what that run measured.
type candidate struct {
	s    scenarios.Scenario
	dir  string
	size reports.Size
	// seen is when the kind was first found in that run; wall is how long
	// the run took, start-up included.
	seen time.Duration
	wall time.Duration
}

// scenarioSearch is the scenario stage's state: the scenarios kept,
// smallest last, the cuts' scenarios tried, and the cuts' words dropped.
// A cut that did not show the kind is not tried again after others were
// kept (the same words: the noise a violation needs stays needed); a
// shorter run or fewer clients have words of their own.
type scenarioSearch struct {
	kept           []candidate
	tried, dropped map[string]bool
}

// scenarioShare is the share of the budget (%) the scenario's cuts may
// search in, less the time their confirmation would take: the script
// form, which cuts far deeper, has the rest, its confirmation included.
const scenarioShare = 35

// searchScenarios tries the cuts of the smallest scenario kept, one at a
// time, starting again from each one kept, until none is kept or share
// percent of the budget, less the time a confirmation takes, is spent;
// it says why it ended.
func (sh *shrinker) searchScenarios(ctx context.Context, ss *scenarioSearch, share time.Duration, res *reports.Shrunk) string {
	o := sh.o
	for {
		best := ss.kept[len(ss.kept)-1]
		progress := false
		for _, cut := range Cuts(best.s, best.seen) {
			key := cut.Scenario.Command()
			if ss.tried[key] || ss.dropped[cut.What] {
				continue
			}
			// leave the script form and the confirmation their time
			if time.Since(sh.start)+best.wall*time.Duration(o.Confirm)*3/2 > o.Budget*share/100 {
				return "budget"
			}
			ss.tried[key] = true
			kept, err := sh.tryCut(ctx, ss, cut, res)
			if err != nil {
				return "interrupted"
			}
			if kept {
				progress = true
				break
			}
		}
		if !progress {
			break
		}
	}
	return "no smaller scenario showed " + o.Kind
}

// tryCut tries cut, keeps it in ss when every run showed the kind (or
// drops its words), and records the step in res and on the progress
// line. It fails only when ctx ended.
func (sh *shrinker) tryCut(ctx context.Context, ss *scenarioSearch, cut Cut, res *reports.Shrunk) (bool, error) {
	o := sh.o
	began := time.Now()
	c, shown, runs, err := sh.try(ctx, cut)
	step := reports.ShrinkStep{What: cut.What, Reproduced: shown, Runs: runs, Seconds: time.Since(began).Seconds()}
	if err != nil {
		if ctx.Err() != nil {
			return false, ctx.Err()
		}
		// a run that could not be carried out (a topology that did not
		// start on a loaded machine) drops the cut, not the shrink
		step.Error = err.Error()
		fmt.Fprintf(o.Progress, "  %s %s: %v: dropped\n", sh.clock(), cut.What, err)
	}
	// Every cut takes something away, so a cut that shows the kind is
	// kept even when its run had more operations (with the stalls off, a
	// run does more before its violation): the cuts after it take those
	// away.
	verdict := "dropped"
	if c != nil {
		step.Kept, step.Size = true, &c.size
		ss.kept = append(ss.kept, *c)
		verdict = "kept, " + c.size.String()
	} else {
		ss.dropped[cut.What] = true
	}
	res.Steps = append(res.Steps, step)
	fmt.Fprintf(o.Progress, "  %s %s: %d of %d showed %s: %s\n", sh.clock(), cut.What, shown, runs, o.Kind, verdict)
	return c != nil, nil
}

// try runs cut's scenario until a run does not show the kind or Tries
// runs did; it returns the candidate (the first run's folder kept) when
// every run showed it.
func (sh *shrinker) try(ctx context.Context, cut Cut) (*candidate, int, int, error) {
	var c *candidate
	for i := 1; i <= sh.o.Tries; i++ {
		r, err := sh.run(ctx, cut.Scenario, cut.What)
		if err != nil {
			if c != nil {
				os.RemoveAll(c.dir)
			}
			return nil, i - 1, i, err
		}
		if !r.shown {
			os.RemoveAll(r.dir)
			if c != nil {
				os.RemoveAll(c.dir)
			}
			return nil, i - 1, i, nil
		}
		if c == nil {
			c = &r.candidate
		} else {
			os.RemoveAll(r.dir)
		}
	}
	return c, sh.o.Tries, sh.o.Tries, nil
}

// runOutcome is one run of a candidate scenario.
type runOutcome struct {
	candidate
	shown bool
}

// run executes s once into a fresh folder under tries/.
func (sh *shrinker) run(ctx context.Context, s scenarios.Scenario, what string) (runOutcome, error) {
	dir := sh.tryDir()
	began := time.Now()
	out, err := harness.Execute(ctx, sh.eng, s, harness.Options{Out: dir, Sources: sh.o.Sources, StopOnViolation: true, Replay: scenarios.ReplayCommand(sh.o.Out)})
	if err != nil {
		return runOutcome{}, fmt.Errorf("shrink: %s: %w", what, err)
	}
	if out.Interrupted {
		return runOutcome{}, context.Canceled
	}
	r := runOutcome{candidate: candidate{s: s, dir: dir, size: reports.SizeOf(out.Result), seen: firstSeen(out.Result, sh.o.Kind), wall: time.Since(began)}}
	r.shown = slices.Contains(out.Check.Checks.FailingKinds(), sh.o.Kind)
	return r, nil
}

// confirm replays the smallest kept scenario Confirm times and falls back
// to the one kept before it while a scenario cannot reach Need; it stops
// at the budget. It returns the scenario confirmed, or the smallest one
// unconfirmed when none was (nil when nothing smaller was found and the
// original could not be confirmed either).
func (sh *shrinker) confirm(ctx context.Context, kept []candidate, res *reports.Shrunk) (*candidate, error) {
	o := sh.o
	for k := len(kept) - 1; k >= 0 && ctx.Err() == nil; k-- {
		c := kept[k]
		shown, runs := 0, 0
		var first *candidate
		for runs < o.Confirm && shown+(o.Confirm-runs) >= o.Need {
			if time.Since(sh.start) > o.Budget {
				res.Ended = "budget"
				break
			}
			r, err := sh.run(ctx, c.s, "confirm")
			if err != nil && ctx.Err() != nil {
				break
			}
			if err != nil {
				// counted as a replay that did not show it
				fmt.Fprintf(o.Progress, "  %s confirm: %v\n", sh.clock(), err)
				r = runOutcome{}
			}
			runs++
			if r.shown {
				shown++
			}
			if r.shown && first == nil {
				first = &r.candidate
			} else {
				os.RemoveAll(r.dir)
			}
			fmt.Fprintf(o.Progress, "  %s confirm (%s): %d of %d showed %s\n", sh.clock(), c.size, shown, runs, o.Kind)
		}
		res.Reproduced, res.Runs = shown, runs
		if shown >= o.Need {
			res.Confirmed = true
			return first, nil
		}
		if first != nil {
			os.RemoveAll(first.dir)
		}
		if time.Since(sh.start) > o.Budget {
			break
		}
	}
	// unconfirmed: keep the smallest, said so in shrink.json
	if c := kept[len(kept)-1]; len(kept) > 1 {
		return &c, nil
	}
	return nil, nil
}

// firstSeen is when the run's first failing finding of kind ended (0 when
// none did).
func firstSeen(r reports.RunResult, kind string) time.Duration {
	var first int64 = -1
	for _, c := range r.Checks {
		for _, f := range c.Findings {
			if string(f.Kind) == kind && !f.Allowed && (first < 0 || f.End < first) {
				first = f.End
			}
		}
	}
	return time.Duration(max(first, 0))
}
