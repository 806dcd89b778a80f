package tables

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/lockcheck/lockcheck/measure"
	"github.com/lockcheck/lockcheck/reports"
	"github.com/lockcheck/lockcheck/shrink"
	"github.com/lockcheck/lockcheck/topology"
)

// ShrinkFigures shrinks violated runs, each by shrink.Run with the same
// bounds, Parallel at once: a row per run, the table the README and
// docs/reproducing.md show. Each reproducer goes beside its run
// (Reproducer), as lockcheck shrink DIR writes it, and each shrink's
// progress into RUN.shrink.log beside it: a shrink's lines are many, and
// two at once in one log could not be told apart. Like CatchRate it is a
// measurement for the docs, not a test.
type ShrinkFigures struct {
	// Runs are the violated runs' folders, in any order (ShrinkPlan).
	Runs []string
	// Options bound every shrink; Out and Progress are each run's own.
	Options shrink.Options
	// Parallel is how many shrinks run at once (1 when 0).
	Parallel int
	// Shard is the part of the runs this measurement shrinks (all when
	// zero); lockcheck merge joins the shards' folders.
	Shard measure.Shard
	// Out receives shrink-figures.md and shrink-figures.json.
	Out string
	Log io.Writer
}

// shrinkFunc shrinks one run: shrink.Run on an engine, or a test's fake.
type shrinkFunc func(ctx context.Context, from string, o shrink.Options) (*reports.Shrunk, error)

// ShrinkPlan is one item per run folder, each cleaned, sorted: every
// shard sees the same plan whatever order its folders were given in. A
// folder given twice is an error: its two shrinks would write one
// reproducer.
func ShrinkPlan(runs []string) (measure.Plan[string], error) {
	items := make([]string, len(runs))
	for i, r := range runs {
		items[i] = filepath.Clean(r)
	}
	slices.Sort(items)
	for i := 1; i < len(items); i++ {
		if items[i] == items[i-1] {
			return measure.Plan[string]{}, fmt.Errorf("%s is given twice: give each violated run once", items[i])
		}
	}
	return measure.Plan[string]{Items: items, Key: func(s string) string { return s }}, nil
}

// Reproducer is the folder a run's reproducer goes into: RUN-shrunk,
// lockcheck shrink's default.
func Reproducer(run string) string { return filepath.Clean(run) + "-shrunk" }

// Measure shrinks every run of the shard and writes the table after each,
// and at the end; after Ctrl-C it returns the shrinks that finished,
// written too.
func (f ShrinkFigures) Measure(ctx context.Context, eng *topology.Engine) (*reports.ShrinkFigures, error) {
	return f.measure(ctx, func(ctx context.Context, from string, o shrink.Options) (*reports.Shrunk, error) {
		return shrink.Run(ctx, eng, from, o)
	})
}

func (f ShrinkFigures) measure(ctx context.Context, run shrinkFunc) (*reports.ShrinkFigures, error) {
	if f.Log == nil {
		f.Log = io.Discard
	}
	plan, err := ShrinkPlan(f.Runs)
	if err != nil {
		return nil, err
	}
	begin := time.Now()
	sf := &reports.ShrinkFigures{Budget: f.Options.Budget.String(), Tries: f.Options.Tries, Confirm: f.Options.Confirm, Started: begin}
	runner := measure.Runner{Workers: max(f.Parallel, 1), Shard: f.Shard, Log: f.Log, Unit: "shrinks"}
	_, err = measure.Run(ctx, runner, plan, func(ctx context.Context, l *measure.Lane, from string) (reports.Shrunk, error) {
		return f.shrinkOne(ctx, l, from, run)
	}, func(s *measure.Snapshot[reports.Shrunk]) error {
		sf.Rows = values(s.Results)
		sf.Elapsed, sf.Machine, sf.Complete, sf.Part = reports.MillisOf(time.Since(begin)), s.Machine, s.Complete, s.Part
		return reports.WriteShrinkFigures(f.Out, sf)
	})
	return sf, err
}

// shrinkOne shrinks one run into its reproducer's folder, its progress
// into RUN.shrink.log.
func (f ShrinkFigures) shrinkOne(ctx context.Context, l *measure.Lane, from string, run shrinkFunc) (reports.Shrunk, error) {
	logPath := from + ".shrink.log"
	log, err := os.Create(logPath)
	if err != nil {
		return reports.Shrunk{}, fmt.Errorf("shrink %s: %w", from, err)
	}
	defer log.Close()
	l.Logf("shrink %s (%d of %d): its progress in %s", from, l.Index+1, l.Of, logPath)
	o := f.Options
	o.Out, o.Progress = Reproducer(from), log
	res, err := run(ctx, from, o)
	if ctx.Err() != nil {
		return reports.Shrunk{}, ctx.Err() // interrupted: a shrink cut short is not a figure
	}
	if err != nil {
		return reports.Shrunk{}, fmt.Errorf("shrink %s: %w", from, err)
	}
	l.Progress(res.Line())
	return *res, nil
}
