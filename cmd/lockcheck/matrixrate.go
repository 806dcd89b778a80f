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
// m.Seed+n-1, each into its own folder (with --shard I/N, the shard's
// seeds only: every N-th from the I-th, each matrix whole), and writes
// the rate table: for each cell, how often it showed its expected
// outcome, and when. A measurement, not a gate: its exit code is 0 once
// every matrix ran.
func runMatrixRate(ctx context.Context, eng *topology.Engine, m harness.Matrix, n int, into []string, note string, stdout, stderr io.Writer) int {
	out, sh := m.Out, measure.Shard{I: m.Shard, N: m.Shards}
	m.Shard, m.Shards = 0, 0 // a shard of the rate runs whole matrices
	run := reports.MatrixRateRun{First: m.Seed, N: n, Started: time.Now(), Note: note, Builds: buildNames(m)}
	load := measure.LoadAverage()
	var plan []string
	for i := range n {
		plan = append(plan, reports.SeedDir(run.First+int64(i)))
	}
	if !sh.Whole() {
		run.Part = measure.Part{Shard: sh.I, Shards: sh.N, Plan: plan}
	}
	var idxs []*reports.Index
	var dirs []string
	for i := range n {
		if !sh.Mine(i) {
			continue
		}
		m.Seed, m.Out = run.First+int64(i), filepath.Join(out, plan[i])
		fmt.Fprintf(stderr, "matrix-rate: matrix %d of %d, seed %d (elapsed %s)\n", i+1, n, m.Seed, time.Since(run.Started).Round(time.Second))
		idx, err := m.Run(ctx, eng)
		if ctx.Err() != nil {
			return fail(stderr, "matrix-rate: interrupted after %d matrices: %s holds them", len(idxs), out)
		}
		if err != nil {
			return fail(stderr, "matrix-rate: %v", err)
		}
		as, of := idx.AsExpected()
		fmt.Fprintf(stderr, "matrix-rate: seed %d: %s; as expected %d of %d\n", m.Seed, totals(idx), as, of)
		idxs, dirs, run.Seeds = append(idxs, idx), append(dirs, m.Out), append(run.Seeds, m.Seed)
	}
	run.Elapsed, run.Machine, run.Complete = reports.MillisOf(time.Since(run.Started)), measure.Machine(max(m.Parallel, 1), "runs", load), true
	if err := reports.WriteJSON(filepath.Join(out, reports.MatrixRateFile), run); err != nil {
		return fail(stderr, "matrix-rate: %v", err)
	}
	if !sh.Whole() {
		fmt.Fprintf(stderr, "matrix-rate: shard %s done; lockcheck merge --out DIR %s ... joins it with the others\n", sh, out)
	}
	return writeRate(out, run, idxs, dirs, into, stdout, stderr)
}

// writeRate writes the rate table of idxs (dirs their folders) into
// out/matrix-rate.md, prints it, and splices it into the pages into.
func writeRate(out string, run reports.MatrixRateRun, idxs []*reports.Index, dirs, into []string, stdout, stderr io.Writer) int {
	rows := reports.MatrixRate(idxs, dirs)
	blocks := reports.RateBlocks(rows, run.Measured(rows))
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
