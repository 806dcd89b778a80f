package harness

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"time"

	"github.com/lockcheck/lockcheck/measure"
	"github.com/lockcheck/lockcheck/reports"
	"github.com/lockcheck/lockcheck/scenarios"
	"github.com/lockcheck/lockcheck/topology"
)

// ShrinkOptions bound a shrink: where it writes, how long it may take, and
// how sure each step must be.
type ShrinkOptions struct {
	// Out receives the reproducer's run folder, shrink.json and, while it
	// works, tries/ (removed at the end).
	Out     string
	Sources topology.Sources
	// Budget bounds the whole shrink, confirmation included (default 10
	// minutes): the search stops early enough to leave the confirmation
	// its time, and the confirmation stops at the budget.
	Budget time.Duration
	// Tries is how many runs in a row must show the kind before a cut is
	// kept (default 3): one lucky run does not make a reproducer.
	Tries int
	// Confirm and Need: the reproducer is replayed Confirm times at the
	// end and must show the kind in at least Need of them (10 and 9).
	Confirm, Need int
	// Kind is the finding kind to keep (default: the first of the
	// original run's failing kinds, double_holder when it is one).
	Kind string
	// Progress gets a line per run.
	Progress io.Writer
}

func (o ShrinkOptions) withDefaults() ShrinkOptions {
	if o.Budget <= 0 {
		o.Budget = 10 * time.Minute
	}
	if o.Tries <= 0 {
		o.Tries = 3
	}
	if o.Confirm <= 0 {
		o.Confirm = 10
	}
	if o.Need <= 0 {
		o.Need = o.Confirm - o.Confirm/10
	}
	if o.Progress == nil {
		o.Progress = io.Discard
	}
	return o
}

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

// shrinker carries one shrink's state.
type shrinker struct {
	eng   *topology.Engine
	o     ShrinkOptions
	start time.Time
	// load is the load average when the shrink started.
	load string
	runs int
}

// Shrink searches for a smaller reproducer of the run in from (a run
// folder) that still shows the same kind of violation. It pins the
// seed's fault schedule, then tries the scenario's cuts (scenarios.Cuts)
// one at a time, keeping a cut when Tries runs of it in a row all show
// the kind, for up to scenarioShare of the budget; then the script form
// (traceSearch) from the smallest scenario kept, and confirms the
// smallest script kept, Confirm plays of which must show the kind Need
// times. When no script shows the kind, the scenario's cuts have the rest
// of the budget, and the smallest scenario kept is confirmed the same way
// (falling back to the one before it). Ctrl-C (ctx ended) keeps the best
// found so far, unconfirmed. Out ends as the reproducer's run folder
// (with trace.json or scenario.json) and shrink.json beside its files.
func Shrink(ctx context.Context, eng *topology.Engine, from string, o ShrinkOptions) (*reports.Shrunk, error) {
	o = o.withDefaults()
	in, err := ShrinkInput(from, o.Kind)
	if err != nil {
		return nil, err
	}
	orig, pinned := in.result, in.pinned
	o.Kind = in.Kind
	if err := os.MkdirAll(filepath.Join(o.Out, "tries"), 0o755); err != nil {
		return nil, err
	}
	sh := &shrinker{eng: eng, o: o, start: time.Now(), load: measure.LoadAverage()}
	res := &reports.Shrunk{From: from, Kind: o.Kind, Before: reports.SizeOf(orig), Budget: o.Budget.String(), Started: sh.start.UTC()}
	fmt.Fprintf(o.Progress, "shrink %s: keep %s; before: %s; budget %s\n", from, o.Kind, res.Before, o.Budget)

	// A replay stops at its violation: the original's would take about as
	// long as the time to it, plus a start-up.
	seen := firstSeen(orig, o.Kind)
	kept := []candidate{{s: pinned, size: res.Before, seen: seen, wall: max(seen, time.Second) + 5*time.Second}}
	ss := &scenarioSearch{kept: kept, tried: map[string]bool{pinned.Command(): true}, dropped: map[string]bool{}}
	res.Ended = sh.searchScenarios(ctx, ss, scenarioShare, res)
	kept = ss.kept
	if ctx.Err() == nil {
		best := kept[len(kept)-1]
		dir := best.dir
		if dir == "" {
			dir = from
		}
		// the script's search leaves its confirmation the time it needs;
		// the scenario's confirmation has what is left, should it fail
		if traces, ended := sh.traceSearch(ctx, best.s, dir, best.wall, res); len(traces) > 0 {
			t, shown, runs := sh.confirmTrace(ctx, traces)
			if t == nil && ctx.Err() != nil {
				// Ctrl-C: the smallest script, unconfirmed
				t, ended = &traces[len(traces)-1], "interrupted"
			}
			if t != nil {
				if err := moveUp(t.dir, o.Out); err != nil {
					return nil, err
				}
				res.After, res.Reproduced, res.Runs, res.Confirmed = t.size, shown, runs, shown >= o.Need
				res.Command, res.Script = ReplayCommand(o.Out), t.tr.Describe()
				res.Ended = ended
				return sh.finish(res)
			}
			fmt.Fprintf(o.Progress, "  %s no script reproduced %d of %d times: the scenario is confirmed instead\n", sh.clock(), o.Need, o.Confirm)
		} else if ctx.Err() == nil {
			// no script showed the kind: the scenario's cuts have the
			// rest of the budget
			res.Ended = sh.searchScenarios(ctx, ss, 100, res)
			kept = ss.kept
		}
	}
	final, err := sh.confirm(ctx, kept, res)
	if err != nil {
		return nil, err
	}
	if final != nil {
		if err := moveUp(final.dir, o.Out); err != nil {
			return nil, err
		}
		res.After = final.size
		res.Command = final.s.Command()
	}
	return sh.finish(res)
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

// searchScenarios tries the cuts of the smallest scenario kept, one at a
// time, starting again from each one kept, until none is kept or share
// percent of the budget, less the time a confirmation takes, is spent;
// it says why it ended.
func (sh *shrinker) searchScenarios(ctx context.Context, ss *scenarioSearch, share time.Duration, res *reports.Shrunk) string {
	o := sh.o
	for {
		best := ss.kept[len(ss.kept)-1]
		progress := false
		for _, cut := range scenarios.Cuts(best.s, best.seen) {
			key := cut.Scenario.Command()
			if ss.tried[key] || ss.dropped[cut.What] {
				continue
			}
			// leave the script form and the confirmation their time
			if time.Since(sh.start)+best.wall*time.Duration(o.Confirm)*3/2 > o.Budget*share/100 {
				return "budget"
			}
			ss.tried[key] = true
			began := time.Now()
			c, shown, runs, err := sh.try(ctx, cut)
			step := reports.ShrinkStep{What: cut.What, Reproduced: shown, Runs: runs, Seconds: time.Since(began).Seconds()}
			if err != nil {
				if ctx.Err() != nil {
					return "interrupted"
				}
				// a run that could not be carried out (a topology that
				// did not start on a loaded machine) drops the cut, not
				// the shrink
				step.Error = err.Error()
				fmt.Fprintf(o.Progress, "  %s %s: %v: dropped\n", sh.clock(), cut.What, err)
			}
			// Every cut takes something away, so a cut that shows the
			// kind is kept even when its run had more operations (with
			// the stalls off, a run does more before its violation): the
			// cuts after it take those away.
			if c != nil {
				step.Kept, step.Size = true, &c.size
				ss.kept = append(ss.kept, *c)
				progress = true
			} else {
				ss.dropped[cut.What] = true
			}
			res.Steps = append(res.Steps, step)
			verdict := "dropped"
			if c != nil {
				verdict = "kept, " + c.size.String()
			}
			fmt.Fprintf(o.Progress, "  %s %s: %d of %d showed %s: %s\n", sh.clock(), cut.What, shown, runs, o.Kind, verdict)
			if progress {
				break
			}
		}
		if !progress {
			break
		}
	}
	return "no smaller scenario showed " + o.Kind
}

// scenarioShare is the share of the budget (%) the scenario's cuts may
// search in, less the time their confirmation would take: the script
// form, which cuts far deeper, has the rest, its confirmation included.
const scenarioShare = 35

// finish removes the tries and writes shrink.json.
func (sh *shrinker) finish(res *reports.Shrunk) (*reports.Shrunk, error) {
	if err := os.RemoveAll(filepath.Join(sh.o.Out, "tries")); err != nil {
		return nil, err
	}
	res.Seconds = time.Since(sh.start).Seconds()
	res.Machine = fmt.Sprintf("%d CPUs, load average %s at the start, %s at the end", runtime.NumCPU(), sh.load, measure.LoadAverage())
	return res, reports.WriteJSON(filepath.Join(sh.o.Out, reports.ShrinkFileName), res)
}

// try runs cut's scenario until a run does not show the kind or Tries
// runs did; it returns the candidate (the first run's folder kept) when
// every run showed it.
func (sh *shrinker) try(ctx context.Context, cut scenarios.Cut) (*candidate, int, int, error) {
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
	sh.runs++
	dir := filepath.Join(sh.o.Out, "tries", fmt.Sprintf("%03d", sh.runs))
	began := time.Now()
	out, err := Execute(ctx, sh.eng, s, Options{Out: dir, Sources: sh.o.Sources, StopOnViolation: true, Replay: ReplayCommand(sh.o.Out)})
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

func (sh *shrinker) clock() string {
	return fmt.Sprintf("[%s of %s]", time.Since(sh.start).Round(time.Second), sh.o.Budget)
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

// moveUp moves every file of dir into out (dir is out/tries/N).
func moveUp(dir, out string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("shrink: the reproducer's run folder: %w", err)
	}
	for _, e := range entries {
		target := filepath.Join(out, e.Name())
		if err := os.RemoveAll(target); err != nil {
			return err
		}
		if err := os.Rename(filepath.Join(dir, e.Name()), target); err != nil {
			return errors.Join(errors.New("shrink: move the reproducer up"), err)
		}
	}
	return nil
}
