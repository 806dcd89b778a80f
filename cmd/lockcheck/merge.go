package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/lockcheck/lockcheck/measure/tables"
	"github.com/lockcheck/lockcheck/reports"
	"github.com/lockcheck/lockcheck/scenarios"
)

// runMerge joins the folders of a sharded matrix's parts into one: each
// run's folder is copied in, and index.html, matrix.json and junit.xml are
// written for the whole matrix. Exit codes as for lockcheck matrix. The
// folders of a sharded measurement (catch-rate, false-alarms, claims,
// shrink-figures) are joined into the whole table instead (mergeMeasurement).
func runMerge(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlags("merge", stderr)
	out := fs.String("out", "out/matrix", "folder for the merged matrix or measurement table (created; must not hold another)")
	expect := fs.String("expect", "", "with a matrix's folders: exit 0 or 1 by this expectation of every run alone: lock-correct, safe or fence-holds")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: lockcheck merge [--out DIR] SHARD_DIR...\n\nJoins the folders of lockcheck matrix --shard I/N (one per shard) into one matrix folder; exit codes as for lockcheck matrix. Given the folders of a measurement's shards (catch-rate, false-alarms, claims, shrink-figures, or matrix --repeat, with --shard I/N), writes the table of the whole plan into --out, as the unsharded measurement writes it, and prints it; exit 0, or 2 when the shards do not make one measurement.")
		fs.PrintDefaults()
	}
	if ok, code := parse(fs, args, stderr); !ok {
		return code
	}
	e, code := parseExpect(*expect, stderr)
	if code != 0 {
		return code
	}
	if fs.NArg() == 0 {
		return fail(stderr, "merge wants the shards' folders: lockcheck merge --out DIR SHARD_DIR...")
	}
	if !settled(stderr) {
		return 0
	}
	if _, err := os.Stat(filepath.Join(fs.Arg(0), reports.MatrixRateFile)); err == nil {
		if *expect != "" {
			return fail(stderr, "--expect goes with a matrix's folders; %s holds a rate measurement", fs.Arg(0))
		}
		return mergeMatrixRate(fs.Args(), *out, stdout, stderr)
	}
	if tables.MeasurementFile(fs.Arg(0)) != "" {
		return mergeMeasurement(fs.Args(), *out, *expect, stdout, stderr)
	}
	if _, err := os.Stat(filepath.Join(*out, "matrix.json")); err == nil {
		return fail(stderr, "%s already holds a matrix: give --out a new folder", *out)
	}
	var parts []*reports.Index
	for _, dir := range fs.Args() {
		idx, err := reports.LoadIndex(dir)
		if err != nil {
			return fail(stderr, "%v", err)
		}
		parts = append(parts, idx)
	}
	merged, err := reports.MergeIndexes(parts, func(dir string) string { return scenarios.ReplayCommand(filepath.Join(*out, dir)) })
	if err != nil {
		return fail(stderr, "%v", err)
	}
	for p, idx := range parts {
		for _, c := range idx.Cells {
			if c.Dir == "" || c.Outcome == reports.CellOtherShard {
				continue
			}
			src := filepath.Join(fs.Arg(p), c.Dir)
			if _, err := os.Stat(src); err != nil {
				continue // a cell that failed before its folder was made
			}
			if err := os.CopyFS(filepath.Join(*out, c.Dir), os.DirFS(src)); err != nil {
				return fail(stderr, "copy %s: %v", src, err)
			}
		}
	}
	if err := reports.WriteIndex(*out, merged); err != nil {
		return fail(stderr, "%v", err)
	}
	fmt.Fprintf(stdout, "merged %d shards: %s: %s\n", len(parts), totals(merged), filepath.Join(*out, "index.html"))
	return matrixExit(merged, *out, e, stderr)
}

// mergeMeasurement joins the folders of a sharded measurement's parts
// into the whole table in out.
func mergeMeasurement(dirs []string, out, expect string, stdout, stderr io.Writer) int {
	if expect != "" {
		return fail(stderr, "--expect goes with a matrix's folders; %s holds a measurement's table", dirs[0])
	}
	if err := tables.Merge(dirs, out, stdout); err != nil {
		return fail(stderr, "%v", err)
	}
	fmt.Fprintf(stderr, "merged %d shards: %s %s\n", len(dirs), out, tables.MeasurementFile(out))
	return 0
}
