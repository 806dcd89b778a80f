package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/lockcheck/lockcheck/checker"
	"github.com/lockcheck/lockcheck/history"
	"github.com/lockcheck/lockcheck/measure"
	"github.com/lockcheck/lockcheck/reports"
)

// fakeSeed writes the matrix of seed into dir/seed-S as lockcheck matrix
// would: one cell, violated (its expected outcome) on odd seeds and not
// reproduced on even ones, with its run's result.json.
func fakeSeed(t *testing.T, dir string, seed int64) {
	t.Helper()
	outcome := reports.CellViolated
	rr := reports.RunResult{Verdict: checker.Violated, DurationMs: 20000 + 1000*seed, Injected: []history.Fault{{Name: "kill-primary", Start: 1e9}}}
	if seed%2 == 0 {
		outcome = reports.CellNotReproduced
	} else {
		rr.Checks = checker.Checks{{Name: checker.DoubleHolder, Status: checker.Fail, Count: 1,
			Findings: []checker.Finding{{Kind: checker.KindDoubleHolder, Start: seed * 1e9}}}}
	}
	m := filepath.Join(dir, reports.SeedDir(seed))
	if err := os.MkdirAll(filepath.Join(m, "run"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := rr.Save(filepath.Join(m, "run", "result.json")); err != nil {
		t.Fatal(err)
	}
	idx := &reports.Index{Seed: seed, Cells: []reports.IndexCell{{Server: "valkey-9.1", Topology: "sentinel", Client: "native", Fault: "kill-primary",
		Expected: reports.CellViolated, Outcome: outcome, Verdict: checker.Violated, Seed: seed, Dir: "run", Reason: "why not"}}}
	if err := reports.WriteIndex(m, idx); err != nil {
		t.Fatal(err)
	}
}

// TestShardedMatrixRateMerged: a rate measurement of 5 seeds run as 2
// shards (seeds 1, 3, 5 and 2, 4) and merged gives the table the whole
// measurement's 5 seeds give.
func TestShardedMatrixRateMerged(t *testing.T) {
	root := t.TempDir()
	whole := filepath.Join(root, "whole")
	var idxs []*reports.Index
	var dirs []string
	for s := int64(1); s <= 5; s++ {
		fakeSeed(t, whole, s)
		idx, err := reports.LoadIndex(filepath.Join(whole, reports.SeedDir(s)))
		if err != nil {
			t.Fatal(err)
		}
		idxs, dirs = append(idxs, idx), append(dirs, filepath.Join(whole, reports.SeedDir(s)))
	}
	want := reports.RateMarkdown(reports.MatrixRate(idxs, dirs))
	plan := []string{"seed-1", "seed-2", "seed-3", "seed-4", "seed-5"}
	var shards []string
	for i, seeds := range [][]int64{{1, 3, 5}, {2, 4}} {
		dir := filepath.Join(root, fmt.Sprintf("shard-%d", i+1))
		for _, s := range seeds {
			fakeSeed(t, dir, s)
		}
		run := reports.MatrixRateRun{Part: measure.Part{Shard: i + 1, Shards: 2, Plan: plan}, First: 1, N: 5, Seeds: seeds, Builds: "valkey-9.1", Machine: "m", Complete: true}
		if err := reports.WriteJSON(filepath.Join(dir, reports.MatrixRateFile), run); err != nil {
			t.Fatal(err)
		}
		shards = append(shards, dir)
	}
	out := filepath.Join(root, "merged")
	var stdout, stderr bytes.Buffer
	if code := run(append([]string{"merge", "--out", out}, shards[1], shards[0]), &stdout, &stderr); code != 0 {
		t.Fatalf("merge: exit %d: %s", code, stderr.String())
	}
	got, err := os.ReadFile(filepath.Join(out, "matrix-rate.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(got, []byte(want)) {
		t.Fatalf("the merged table differs from the whole's:\nmerged:\n%s\nwhole:\n%s", got, want)
	}
	// a shard missing is refused, before anything is written
	stderr.Reset()
	if code := run([]string{"merge", "--out", filepath.Join(root, "half"), shards[0]}, &stdout, &stderr); code != 2 {
		t.Fatalf("one shard of two merged: exit %d, %s", code, stderr.String())
	}
}
