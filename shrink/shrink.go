package shrink

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"time"

	"github.com/lockcheck/lockcheck/measure"
	"github.com/lockcheck/lockcheck/reports"
	"github.com/lockcheck/lockcheck/scenarios"
	"github.com/lockcheck/lockcheck/topology"
)

// shrinker carries one shrink's state.
type shrinker struct {
	eng   *topology.Engine
	o     Options
	start time.Time
	// load is the load average when the shrink started.
	load string
	runs int
}

// Run searches for a smaller reproducer of the run in from (a run
// folder) that still shows the same kind of violation. It pins the
// seed's fault schedule, then tries the scenario's cuts (Cuts) one at a
// time, keeping a cut when Tries runs of it in a row all show the kind,
// for up to scenarioShare of the budget; then the script form
// (traceSearch) from the smallest scenario kept, and confirms the
// smallest script kept, Confirm plays of which must show the kind Need
// times. When no script shows the kind, the scenario's cuts have the rest
// of the budget, and the smallest scenario kept is confirmed the same way
// (falling back to the one before it). Ctrl-C (ctx ended) keeps the best
// found so far, unconfirmed. Out ends as the reproducer's run folder
// (with trace.json or scenario.json) and shrink.json beside its files.
func Run(ctx context.Context, eng *topology.Engine, from string, o Options) (*reports.Shrunk, error) {
	o = o.withDefaults()
	in, err := LoadInput(from, o.Kind)
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
	if ctx.Err() == nil {
		done, err := sh.scriptStage(ctx, ss, from, res)
		if err != nil {
			return nil, err
		}
		if done {
			return sh.finish(res)
		}
	}
	final, err := sh.confirm(ctx, ss.kept, res)
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

// scriptStage searches the script form from the smallest scenario kept
// and confirms the smallest script kept; it says whether a script became
// the reproducer (moved up into Out, res filled in). The script's search
// leaves its confirmation the time it needs; the scenario's confirmation
// has what is left, should it fail. When no script showed the kind, the
// scenario's cuts have the rest of the budget.
func (sh *shrinker) scriptStage(ctx context.Context, ss *scenarioSearch, from string, res *reports.Shrunk) (bool, error) {
	best := ss.kept[len(ss.kept)-1]
	dir := best.dir
	if dir == "" {
		dir = from
	}
	traces, ended := sh.traceSearch(ctx, best.s, dir, best.wall, res)
	if len(traces) == 0 {
		if ctx.Err() == nil {
			res.Ended = sh.searchScenarios(ctx, ss, 100, res)
		}
		return false, nil
	}
	t, shown, runs := sh.confirmTrace(ctx, traces)
	if t == nil && ctx.Err() != nil {
		// Ctrl-C: the smallest script, unconfirmed
		t, ended = &traces[len(traces)-1], "interrupted"
	}
	if t == nil {
		fmt.Fprintf(sh.o.Progress, "  %s no script reproduced %d of %d times: the scenario is confirmed instead\n", sh.clock(), sh.o.Need, sh.o.Confirm)
		return false, nil
	}
	if err := moveUp(t.dir, sh.o.Out); err != nil {
		return false, err
	}
	res.After, res.Reproduced, res.Runs, res.Confirmed = t.size, shown, runs, shown >= sh.o.Need
	res.Command, res.Script = scenarios.ReplayCommand(sh.o.Out), t.tr.Describe()
	res.Ended = ended
	return true, nil
}

// finish removes the tries and writes shrink.json.
func (sh *shrinker) finish(res *reports.Shrunk) (*reports.Shrunk, error) {
	if err := os.RemoveAll(filepath.Join(sh.o.Out, "tries")); err != nil {
		return nil, err
	}
	res.Seconds = time.Since(sh.start).Seconds()
	res.Machine = fmt.Sprintf("%d CPUs, load average %s at the start, %s at the end", runtime.NumCPU(), sh.load, measure.LoadAverage())
	return res, reports.WriteJSON(filepath.Join(sh.o.Out, reports.ShrinkFileName), res)
}

// tryDir is a fresh folder under tries/ for the shrink's next run.
func (sh *shrinker) tryDir() string {
	sh.runs++
	return filepath.Join(sh.o.Out, "tries", fmt.Sprintf("%03d", sh.runs))
}

func (sh *shrinker) clock() string {
	return fmt.Sprintf("[%s of %s]", time.Since(sh.start).Round(time.Second), sh.o.Budget)
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
