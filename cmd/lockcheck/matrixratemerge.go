package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/lockcheck/lockcheck/reports"
)

// mergeMatrixRate joins the folders of a sharded rate measurement
// (lockcheck matrix --repeat --shard I/N) into out: every shard's seed
// folders copied in, and the rate table of all of them, which is the
// table the whole measurement gives.
func mergeMatrixRate(dirs []string, out string, stdout, stderr io.Writer) int {
	if _, err := os.Stat(filepath.Join(out, reports.MatrixRateFile)); err == nil {
		return fail(stderr, "%s already holds a rate measurement: give --out a new folder", out)
	}
	runs, dirs, err := loadRateRuns(dirs)
	if err != nil {
		return fail(stderr, "merge: %v", err)
	}
	whole := reports.MatrixRateRun{First: runs[0].First, N: runs[0].N, Note: runs[0].Note, Builds: runs[0].Builds, Started: runs[0].Started, Complete: true}
	var machines []string
	var idxs []*reports.Index
	var seedDirs []string
	for i, r := range runs {
		whole.Seeds = append(whole.Seeds, r.Seeds...)
		if r.Started.Before(whole.Started) {
			whole.Started = r.Started
		}
		whole.Elapsed, whole.Complete = max(whole.Elapsed, r.Elapsed), whole.Complete && r.Complete
		machines = append(machines, fmt.Sprintf("shard %d: %s", r.Shard, r.Machine))
		for _, s := range r.Seeds {
			src, dst := filepath.Join(dirs[i], reports.SeedDir(s)), filepath.Join(out, reports.SeedDir(s))
			if err := os.CopyFS(dst, os.DirFS(src)); err != nil {
				return fail(stderr, "merge: copy %s: %v", src, err)
			}
		}
	}
	slices.Sort(whole.Seeds)
	for _, s := range whole.Seeds {
		idx, err := reports.LoadIndex(filepath.Join(out, reports.SeedDir(s)))
		if err != nil {
			return fail(stderr, "merge: %v", err)
		}
		idxs, seedDirs = append(idxs, idx), append(seedDirs, filepath.Join(out, reports.SeedDir(s)))
	}
	whole.Machine = fmt.Sprintf("%d shards; %s", len(runs), strings.Join(machines, "; "))
	if err := reports.WriteJSON(filepath.Join(out, reports.MatrixRateFile), whole); err != nil {
		return fail(stderr, "merge: %v", err)
	}
	return writeRate(out, whole, idxs, seedDirs, nil, stdout, stderr)
}

// loadRateRuns reads each folder's matrix-rate.json and returns them and
// their folders in shard order; it refuses shards that do not make one
// measurement: another plan, a shard missing or given twice.
func loadRateRuns(dirs []string) ([]reports.MatrixRateRun, []string, error) {
	var runs []reports.MatrixRateRun
	for _, d := range dirs {
		var r reports.MatrixRateRun
		if err := reports.ReadJSON(filepath.Join(d, reports.MatrixRateFile), &r); err != nil {
			return nil, nil, err
		}
		if r.Shards < 2 {
			return nil, nil, fmt.Errorf("%s holds a whole rate measurement, not a shard: nothing to merge", d)
		}
		runs = append(runs, r)
	}
	order := make([]int, len(runs))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int { return runs[a].Shard - runs[b].Shard })
	sorted, sortedDirs := make([]reports.MatrixRateRun, len(runs)), make([]string, len(runs))
	for i, o := range order {
		sorted[i], sortedDirs[i] = runs[o], dirs[o]
	}
	runs = sorted
	for i, r := range runs {
		if r.Shards != len(runs) || r.Shard != i+1 {
			return nil, nil, fmt.Errorf("the folders hold shards %s of a measurement in %d: give each shard's folder once", shardList(runs), r.Shards)
		}
		if r.First != runs[0].First || r.N != runs[0].N || r.Builds != runs[0].Builds || !slices.Equal(r.Plan, runs[0].Plan) {
			return nil, nil, fmt.Errorf("shard %d measured another plan (seeds %d.. of %d, %s) than shard 1 (seeds %d.. of %d, %s)",
				r.Shard, r.First, r.N, r.Builds, runs[0].First, runs[0].N, runs[0].Builds)
		}
	}
	return runs, sortedDirs, nil
}

func shardList(runs []reports.MatrixRateRun) string {
	var s []string
	for _, r := range runs {
		s = append(s, fmt.Sprint(r.Shard))
	}
	return strings.Join(s, ", ")
}
