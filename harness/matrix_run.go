package harness

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/lockcheck/lockcheck/measure"
	"github.com/lockcheck/lockcheck/reports"
	"github.com/lockcheck/lockcheck/scenarios/lockclient"
	"github.com/lockcheck/lockcheck/topology"
)

// Run makes every run, Parallel at a time (one by default), each on a
// fresh topology torn down after it, and rewrites the index after each,
// so that index.html always shows what finished. After Ctrl-C (ctx ended)
// it tears down the runs in progress and returns the index as it stands.
// The error is only for the index's files: a run that failed is a cell
// with its reason.
func (m *Matrix) Run(ctx context.Context, eng *topology.Engine) (*reports.Index, error) {
	idx, runs := m.layout()
	begin := time.Now()
	fmt.Fprintf(m.Log, "matrix: %d runs (%s × %s × %s × %s, %s each, %d at a time), %d n/a, %d unavailable -> %s\n", len(runs),
		joinNames(m.Builds, func(b MatrixBuild) string { return b.Name }),
		joinNames(m.Kinds, func(k topology.Kind) string { return string(k) }),
		strings.Join(m.Clients, ","),
		strings.Join(m.Faults, ","), m.Duration, max(m.Parallel, 1),
		idx.Count(reports.CellNA), idx.Count(reports.CellUnavailable), filepath.Join(m.Out, "index.html"))
	m.obtainImages(ctx, eng, runs)
	writeErr := m.write(idx, begin)
	start := slices.Clone(idx.Cells) // each run fills its own copy of its cell
	plan := measure.Plan[matrixRun]{Items: runs, Key: func(r matrixRun) string { return r.scenario.Name() }}
	runner := measure.Runner{Workers: max(m.Parallel, 1), Log: m.Log, Unit: "runs"}
	_, err := measure.Run(ctx, runner, plan, func(ctx context.Context, l *measure.Lane, r matrixRun) (reports.IndexCell, error) {
		own := start[r.cell]
		l.Logf("[%d/%d] start %s, seed %d (elapsed %s)", l.Index+1, l.Of, r.scenario.Name(), own.Seed, since(begin))
		runBegin := time.Now()
		m.runOne(ctx, eng, r, &own)
		done, total := l.Step()
		l.Logf("[%d/%d] end   %s: %s in %s (%d/%d done, elapsed %s)", l.Index+1, l.Of, r.scenario.Name(),
			cellLine(&own), since(runBegin), done, total, since(begin))
		return own, nil
	}, func(snap *measure.Snapshot[reports.IndexCell]) error {
		for _, res := range snap.Results {
			cell := &idx.Cells[runs[res.Index].cell]
			*cell = res.Value
			if cell.Result != nil {
				setVersion(idx, cell)
			}
		}
		return m.write(idx, begin)
	})
	if err != nil {
		writeErr = err
	}
	idx.Complete = ctx.Err() == nil && Incomplete(idx) == 0
	if err := m.write(idx, begin); err != nil {
		writeErr = err
	}
	return idx, writeErr
}

// Incomplete counts the cells whose run did not finish: failed to start or
// run, interrupted, or never run.
func Incomplete(idx *reports.Index) int {
	return idx.Count(reports.CellError) + idx.Count(reports.CellInterrupted) + idx.Count(reports.CellNotRun)
}

// runOne starts a fresh topology, runs one combination on it, tears it
// down and fills the cell. The run's start-up lines go to lockcheck.log in
// its folder, its check table to verdict.txt.
func (m *Matrix) runOne(ctx context.Context, eng *topology.Engine, r matrixRun, cell *reports.IndexCell) {
	dir := filepath.Join(m.Out, cell.Dir)
	err := m.runIn(ctx, eng, r, cell, dir)
	switch {
	case err == nil:
	case errors.Is(err, lockclient.ErrUnsupported):
		cell.Outcome, cell.Reason = reports.CellNA, err.Error()
	case ctx.Err() != nil:
		cell.Outcome, cell.Reason = reports.CellNotRun, "interrupted: "+err.Error()
	default:
		cell.Outcome, cell.Reason, cell.Link = reports.CellError, err.Error(), cell.Dir+"/lockcheck.log"
	}
}

func (m *Matrix) runIn(ctx context.Context, eng *topology.Engine, r matrixRun, cell *reports.IndexCell, dir string) (err error) {
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	log, err := os.Create(filepath.Join(dir, "lockcheck.log"))
	if err != nil {
		return err
	}
	defer log.Close()
	// The cell links here: the log ends with why the run failed.
	defer func() {
		if err != nil {
			fmt.Fprintf(log, "lockcheck: %v\n", err)
		}
	}()
	out, err := Execute(ctx, eng, r.scenario, Options{Out: dir, Sources: m.Sources, Log: log, StopOnViolation: m.StopOnViolation})
	if err != nil {
		return err
	}
	verdict, err := os.Create(filepath.Join(dir, "verdict.txt"))
	if err != nil {
		return err
	}
	defer verdict.Close()
	reports.WriteVerdict(verdict, out.Result, dir)
	cell.SetResult(out.Result, out.Interrupted)
	cell.Link = cell.Dir + "/report.html"
	return nil
}

// write saves the index as it stands.
func (m *Matrix) write(idx *reports.Index, begin time.Time) error {
	idx.Elapsed = since(begin)
	return reports.WriteIndex(m.Out, idx)
}

// setVersion names the version the servers reported in the run's column.
func setVersion(idx *reports.Index, cell *reports.IndexCell) {
	for i := range idx.Columns {
		col := &idx.Columns[i]
		if col.Server == cell.Server && col.Topology == cell.Topology && col.Version == "" {
			col.Version = cell.Result.Version
		}
	}
}

func cellLine(c *reports.IndexCell) string {
	s := c.Text()
	if c.Reason != "" && c.Outcome != reports.CellInterrupted && c.Outcome != reports.CellNotReproduced {
		s += " (" + c.Reason + ")"
	}
	return s
}

func since(t time.Time) string { return time.Since(t).Round(time.Second).String() }

// joinNames joins items by name with commas.
func joinNames[T any](items []T, name func(T) string) string {
	var s []string
	for _, it := range items {
		s = append(s, name(it))
	}
	return strings.Join(s, ",")
}

// obtainImages makes the images of the builds the runs use present before
// any run starts: on a fresh machine the first runs would otherwise each
// build the same image at once. A build that fails is logged; its runs
// then fail with the reason.
func (m *Matrix) obtainImages(ctx context.Context, eng *topology.Engine, runs []matrixRun) {
	seen := map[string]bool{}
	for _, r := range runs {
		name := r.scenario.Server
		if seen[name] || ctx.Err() != nil {
			continue
		}
		seen[name] = true
		b, err := m.Sources.Lookup(name)
		if err == nil {
			_, err = eng.Obtain(ctx, b, m.Sources, m.Log)
		}
		if err != nil {
			fmt.Fprintf(m.Log, "matrix: %s: %v\n", name, err)
		}
	}
}
