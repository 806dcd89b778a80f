package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/lockcheck/lockcheck/harness"
	"github.com/lockcheck/lockcheck/reports"
)

// runMerge joins the folders of a sharded matrix's parts into one: each
// run's folder is copied in, and index.html, matrix.json and junit.xml are
// written for the whole matrix. Exit codes as for lockcheck matrix.
func runMerge(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlags("merge", stderr)
	out := fs.String("out", "out/matrix", "folder for the merged matrix (created; must not hold another matrix)")
	expect := fs.String("expect", "", "exit 0 or 1 by this expectation of every run alone: lock-correct, safe or fence-holds")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: lockcheck merge [--out DIR] SHARD_DIR...\n\nJoins the folders of lockcheck matrix --shard I/N (one per shard) into one matrix folder. Exit codes as for lockcheck matrix.")
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
	merged, err := reports.MergeIndexes(parts, func(dir string) string { return harness.ReplayCommand(filepath.Join(*out, dir)) })
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
