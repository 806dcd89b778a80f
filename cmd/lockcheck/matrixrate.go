package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/lockcheck/lockcheck/harness"
	"github.com/lockcheck/lockcheck/measure"
	"github.com/lockcheck/lockcheck/reports"
	"github.com/lockcheck/lockcheck/topology"
)

// runMatrixRate runs matrix m n times, with the seeds m.Seed to
// m.Seed+n-1, each into its own folder, and writes the rate table: for
// each cell, how often it showed its expected outcome, and when. A
// measurement, not a gate: its exit code is 0 once every matrix ran.
func runMatrixRate(ctx context.Context, eng *topology.Engine, m harness.Matrix, n int, into []string, note string, stdout, stderr io.Writer) int {
	out, first := m.Out, m.Seed
	begin, load := time.Now(), measure.LoadAverage()
	var idxs []*reports.Index
	var dirs []string
	for i := range n {
		m.Seed, m.Out = first+int64(i), filepath.Join(out, fmt.Sprintf("seed-%d", first+int64(i)))
		fmt.Fprintf(stderr, "matrix-rate: matrix %d of %d, seed %d (elapsed %s)\n", i+1, n, m.Seed, time.Since(begin).Round(time.Second))
		idx, err := m.Run(ctx, eng)
		if ctx.Err() != nil {
			return fail(stderr, "matrix-rate: interrupted after %d of %d matrices: %s holds them", i, n, out)
		}
		if err != nil {
			return fail(stderr, "matrix-rate: %v", err)
		}
		as, of := idx.AsExpected()
		fmt.Fprintf(stderr, "matrix-rate: seed %d: %s; as expected %d of %d\n", m.Seed, totals(idx), as, of)
		idxs, dirs = append(idxs, idx), append(dirs, m.Out)
	}
	rows := reports.MatrixRate(idxs, dirs)
	measured := fmt.Sprintf("Measured %s UTC in %s (%s%s), seeds %d..%d of `lockcheck matrix`'s defaults, %s; %s.",
		begin.UTC().Format("2006-01-02 15:04"), time.Since(begin).Round(time.Second), measure.Machine(max(m.Parallel, 1), "runs", load),
		prefixed("; ", note), first, first+int64(n)-1, buildNames(m), reports.RateHeadline(rows))
	blocks := reports.RateBlocks(rows, measured)
	table := filepath.Join(out, "matrix-rate.md")
	if err := os.WriteFile(table, []byte(blocks[0].Text), 0o644); err != nil {
		return fail(stderr, "matrix-rate: %v", err)
	}
	fmt.Fprint(stdout, blocks[0].Text)
	for _, p := range into {
		if err := reports.SpliceFile(p, blocks...); err != nil {
			return fail(stderr, "matrix-rate: %v", err)
		}
		fmt.Fprintf(stderr, "matrix-rate: wrote the table into %s\n", p)
	}
	fmt.Fprintf(stderr, "matrix-rate: %s\n", table)
	return 0
}

func buildNames(m harness.Matrix) string {
	var names []string
	for _, b := range m.Builds {
		names = append(names, b.Name)
	}
	return strings.Join(names, ", ")
}

func prefixed(p, s string) string {
	if s == "" {
		return ""
	}
	return p + s
}
