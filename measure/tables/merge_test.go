package tables

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lockcheck/lockcheck/measure"
	"github.com/lockcheck/lockcheck/reports"
	"github.com/lockcheck/lockcheck/scenarios"
	"github.com/lockcheck/lockcheck/topology"
)

// TestShardedClaimsMerged: the claims table's runs measured in three
// shards (each shard's file written as Measure writes it) and merged
// with lockcheck merge's function give the whole plan's rows and table.
// The runs are made up, by a fake figure per seed: no Docker.
func TestShardedClaimsMerged(t *testing.T) {
	c := Claims{Build: topology.Build{Name: "valkey-9.1"}, Claims: scenarios.RedlockClaims()[:2], Mutants: scenarios.RedlockMutants[:1], Runs: 4}
	rows, mutants, plan := c.rows()
	fake := func(j claimJob) reports.ClaimRun {
		return reports.ClaimRun{Claim: j.claim, Client: j.client, Seed: j.s.Seed, Version: "9.1.2", Verdict: "safe", GateMet: j.s.Seed%2 == 0,
			DoubleHolders: int(j.s.Seed % 3), FirstDouble: reports.Millis(100 * j.s.Seed), Overlap: 5, Acquires: 10}
	}
	var all []reports.ClaimRun
	for _, j := range plan.Items {
		all = append(all, fake(j))
	}
	whole := &reports.Claims{Table: reports.TableClaims, Server: "valkey-9.1", Runs: c.Runs, Complete: true, Started: time.Unix(0, 0)}
	whole.Version, whole.Rows, whole.Mutants = tallyClaims(rows, mutants, all)
	var dirs []string
	for i := 1; i <= 3; i++ {
		shard := measure.Shard{I: i, N: 3}
		var mine []reports.ClaimRun
		for k, r := range all {
			if shard.Mine(k) {
				mine = append(mine, r)
			}
		}
		part := *whole
		part.Version, part.Rows, part.Mutants = tallyClaims(rows, mutants, mine)
		part.Part = measure.Part{Shard: i, Shards: 3, Plan: plan.Keys()}
		dir := t.TempDir()
		if err := reports.WriteClaims(dir, &part); err != nil {
			t.Fatal(err)
		}
		dirs = append(dirs, dir)
	}
	out := filepath.Join(t.TempDir(), "merged")
	var md strings.Builder
	if err := Merge(dirs, out, &md); err != nil {
		t.Fatal(err)
	}
	var merged reports.Claims
	if err := reports.ReadJSON(filepath.Join(out, "claims.json"), &merged); err != nil {
		t.Fatal(err)
	}
	merged.Started, merged.Elapsed, merged.Machine = whole.Started, whole.Elapsed, whole.Machine
	var got, want strings.Builder
	reports.ClaimsPage(&got, &merged)
	reports.ClaimsPage(&want, whole)
	if got.String() != want.String() || !merged.Complete || merged.Shards != 0 {
		t.Fatalf("merged (complete %v, shards %d):\n%s\nwhole:\n%s", merged.Complete, merged.Shards, got.String(), want.String())
	}
	if !strings.Contains(md.String(), "3 shards") {
		t.Errorf("the merged table does not say it was measured in shards:\n%s", md.String())
	}
	if err := Merge(dirs[:2], filepath.Join(t.TempDir(), "two"), &md); err == nil {
		t.Error("two of three shards merged without complaint")
	}
	if err := Merge(dirs, out, &md); err == nil {
		t.Error("a merge over a folder that holds the table already went ahead")
	}
	if _, err := os.Stat(filepath.Join(out, "claims.md")); err != nil {
		t.Error(err)
	}
}
