package harness

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lockcheck/lockcheck/checker"
	"github.com/lockcheck/lockcheck/history"
	"github.com/lockcheck/lockcheck/internal/testengine"
	"github.com/lockcheck/lockcheck/reports"
	"github.com/lockcheck/lockcheck/scenarios"
	"github.com/lockcheck/lockcheck/scenarios/lockclient"
	"github.com/lockcheck/lockcheck/topology"
)

func build(t *testing.T, name string) topology.Build {
	t.Helper()
	b, err := topology.Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestLayout: every combination has a cell; only the ones that can run
// become runs, each with a seed of its own and the command that replays it.
func TestLayout(t *testing.T) {
	m := Matrix{
		Builds:   []MatrixBuild{{Build: build(t, "valkey-9.1")}, {Build: build(t, "valkey-9.0"), Unavailable: "no image"}},
		Kinds:    []topology.Kind{topology.Standalone, topology.Sentinel},
		Clients:  []string{"native", "external:/usr/bin/python3 adapter.py"},
		Faults:   []string{"kill-primary", "clock-jump"},
		Duration: 40 * time.Second, TTL: 15 * time.Second, Seed: 7, Out: "out/m",
	}
	idx, runs := m.layout()
	if len(idx.Cells) != 2*2*2*2 || len(idx.Columns) != 4 || len(idx.Rows) != 4 {
		t.Fatalf("%d cells, %d columns, %d rows", len(idx.Cells), len(idx.Columns), len(idx.Rows))
	}
	// valkey-9.1: standalone fits clock-jump only; sentinel fits both.
	if len(runs) != 2*(1+2) {
		t.Fatalf("%d runs, want 6", len(runs))
	}
	seeds := map[int64]bool{}
	for _, r := range runs {
		c := idx.Cells[r.cell]
		if c.Outcome != reports.CellNotRun || c.Seed <= 0 || seeds[c.Seed] {
			t.Fatalf("run cell %+v", c)
		}
		seeds[c.Seed] = true
		if c.Replay != "lockcheck replay out/m/"+c.Dir || r.scenario.Seed != c.Seed || r.scenario.Server != "valkey-9.1" {
			t.Fatalf("cell %+v, scenario %+v", c, r.scenario)
		}
	}
	// A fault that does not fit is n/a on every build, available or not.
	if idx.Count(reports.CellNA) != 4 || idx.Count(reports.CellUnavailable) != 6 {
		t.Fatalf("n/a %d, unavailable %d", idx.Count(reports.CellNA), idx.Count(reports.CellUnavailable))
	}
	// A run's seed depends on its combination only.
	other := m
	other.Clients = []string{"native"}
	if m.RunSeed("valkey-9.1", topology.Sentinel, "native", "clock-jump") != other.RunSeed("valkey-9.1", topology.Sentinel, "native", "clock-jump") {
		t.Fatal("a run's seed changed with the other combinations")
	}
}

// TestShards: the shards of a matrix run every runnable cell once between
// them, with the unsharded matrix's seeds, and mark the others' cells.
func TestShards(t *testing.T) {
	m := Matrix{
		Builds:  []MatrixBuild{{Build: build(t, "valkey-9.1")}, {Build: build(t, "valkey-8.1")}},
		Kinds:   []topology.Kind{topology.Standalone, topology.Sentinel, topology.Cluster},
		Clients: []string{"native", "fenced"},
		Faults:  []string{"kill-primary", "clock-jump", "pause-primary"},
		Seed:    11, Duration: time.Minute, TTL: 15 * time.Second,
	}
	all := m.Scenarios()
	seen := map[string]int64{}
	for i := 1; i <= 3; i++ {
		shard := m
		shard.Shard, shard.Shards = i, 3
		idx, runs := shard.layout()
		if got := idx.Count(reports.CellOtherShard); got != len(all)-len(runs) {
			t.Fatalf("shard %d: %d cells of other shards, want %d", i, got, len(all)-len(runs))
		}
		for _, r := range runs {
			name := r.scenario.Name()
			if _, dup := seen[name]; dup {
				t.Fatalf("%s runs in two shards", name)
			}
			seen[name] = r.scenario.Seed
		}
	}
	if len(seen) != len(all) {
		t.Fatalf("the shards ran %d scenarios, the matrix has %d", len(seen), len(all))
	}
	for _, s := range all {
		if seen[s.Name()] != s.Seed {
			t.Fatalf("%s: seed %d in its shard, %d in the matrix", s.Name(), seen[s.Name()], s.Seed)
		}
	}
}

func TestMain(m *testing.M) { testengine.Main(m) }

func eng(t *testing.T) *topology.Engine { return testengine.Get(t) }

// TestMatrixRun runs a small matrix on valkey-9.1 standalone: a run that
// finishes, a client the build refuses (n/a, after its topology started and
// went), a fault that does not fit (n/a), an unavailable build; and the
// index's files.
func TestMatrixRun(t *testing.T) {
	out := t.TempDir()
	m := Matrix{
		Builds:  []MatrixBuild{{Build: build(t, "valkey-9.1")}, {Build: build(t, "valkey-9.0"), Unavailable: "no image here"}},
		Kinds:   []topology.Kind{topology.Standalone},
		Clients: []string{"native", "delex"},
		Faults:  []string{"script-flush", "kill-primary"},
		// A lease several times the longest hold (2 TTL/5), so that no
		// holder of the correct client outlives it on a loaded machine.
		// No longer than the fault schedule's warm-up plus a lease
		// (fault.Schedule), so no step is drawn, as at 8 s before; 3 s of
		// workload give the cell its operations.
		Duration: 3 * time.Second, TTL: 5 * time.Second, Seed: 3, Out: out, Log: io.Discard,
	}
	idx, err := m.Run(context.Background(), eng(t))
	if err != nil {
		t.Fatal(err)
	}
	if !idx.Complete {
		t.Fatalf("incomplete: %d cells did not finish", Incomplete(idx))
	}
	for _, f := range []string{"index.html", "matrix.json", "junit.xml"} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Fatal(err)
		}
	}
	cell := func(server, client, fault string) reports.IndexCell {
		for _, c := range idx.Cells {
			if c.Server == server && c.Client == client && c.Fault == fault {
				return c
			}
		}
		t.Fatalf("no cell %s %s %s", server, client, fault)
		return reports.IndexCell{}
	}
	ran := cell("valkey-9.1", "native", "script-flush")
	if ran.Result == nil || ran.Result.Ops == 0 || ran.Link == "" {
		t.Fatalf("the run's cell: %+v", ran)
	}
	// No step of script-flush is drawn in 3 s: the correct client shows
	// the stale writes of its stalled holders (the default workload's,
	// which the default gate allows), or nothing, which is not a safe run
	// under a fault that never struck.
	if ran.Outcome != reports.CellNotReproduced && ran.Outcome != reports.CellStale {
		t.Fatalf("native under script-flush: %s (%s)", ran.Outcome, ran.Reason)
	}
	if ran.Outcome == reports.CellNotReproduced && !strings.Contains(ran.Reason, "no step of script-flush ran") {
		t.Fatalf("not reproduced, but why: %s", ran.Reason)
	}
	for _, f := range []string{"report.html", "history.json", "result.json", "junit.xml", "verdict.txt", "run.log"} {
		if _, err := os.Stat(filepath.Join(out, ran.Dir, f)); err != nil {
			t.Fatal(err)
		}
	}
	if c := cell("valkey-9.1", "delex", "script-flush"); c.Outcome != reports.CellNA || !strings.Contains(c.Reason, "DELEX") {
		t.Fatalf("delex on 9.1: %s (%s), want n/a for want of DELEX", c.Outcome, c.Reason)
	}
	if c := cell("valkey-9.1", "native", "kill-primary"); c.Outcome != reports.CellNA {
		t.Fatalf("kill-primary on standalone: %s", c.Outcome)
	}
	if c := cell("valkey-9.0", "native", "script-flush"); c.Outcome != reports.CellUnavailable || c.Reason != "no image here" {
		t.Fatalf("unavailable build: %s (%s)", c.Outcome, c.Reason)
	}
	if v := idx.Columns[0].Version; !strings.HasPrefix(v, "9.1") {
		t.Fatalf("column version %q", v)
	}
}

// TestExecuteInterrupted: Ctrl-C mid-run still checks and writes what was
// recorded, and says the results are partial.
func TestExecuteInterrupted(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	topo := standalone(ctx, t)
	runCtx, stop := context.WithCancel(ctx)
	time.AfterFunc(3*time.Second, stop)
	out := t.TempDir()
	begin := time.Now()
	s := scenarios.Scenario{ServerSettings: scenarios.ServerSettings{Server: "valkey-9.1"}, ClientSettings: scenarios.ClientSettings{Client: "native"}, TrafficSettings: scenarios.TrafficSettings{Duration: time.Minute, TTL: time.Second, Seed: 1}}
	o, err := ExecuteOn(runCtx, topo, s, Options{Out: out})
	if err != nil {
		t.Fatal(err)
	}
	if took := time.Since(begin); took > 20*time.Second {
		t.Fatalf("the run took %v after Ctrl-C at 3 s", took)
	}
	if !o.Interrupted || len(o.History.Ops) == 0 {
		t.Fatalf("interrupted %v with %d ops", o.Interrupted, len(o.History.Ops))
	}
	rr, err := reports.LoadRunResult(filepath.Join(out, "result.json"))
	if err != nil || rr.Ops != len(o.History.Ops) {
		t.Fatalf("result.json: %v, %d ops", err, rr.Ops)
	}
}

// TestShardedMatrixMerged: a matrix run in three shards and merged gives
// the unsharded matrix's cells, seeds and outcomes. The runs are shorter
// than the fault schedule's warm-up, so no fault step strikes and every
// run is not reproduced (its fault never ran): the outcomes are the same
// however the runs' timing falls.
func TestShardedMatrixMerged(t *testing.T) {
	m := Matrix{
		Builds:  []MatrixBuild{{Build: build(t, "valkey-9.1")}},
		Kinds:   []topology.Kind{topology.Standalone},
		Clients: []string{"native", "fenced", "lua"},
		Faults:  []string{"script-flush", "kill-primary"},
		// A lease several times the longest hold, so that no holder of a
		// correct client outlives it on a loaded machine. Six runs (three
		// whole, three sharded) of 2 s: no longer than the fault
		// schedule's warm-up plus a lease, so no step is drawn, as at 5 s
		// before, and what is compared (cells, seeds, outcomes) does not
		// grow with the runs' length.
		Duration: 2 * time.Second, TTL: 5 * time.Second, Seed: 5, Log: io.Discard,
	}
	whole := m
	whole.Out = t.TempDir()
	want, err := whole.Run(context.Background(), eng(t))
	if err != nil {
		t.Fatal(err)
	}
	var parts []*reports.Index
	for i := 1; i <= 3; i++ {
		shard := m
		shard.Shard, shard.Shards, shard.Out = i, 3, t.TempDir()
		if _, err := shard.Run(context.Background(), eng(t)); err != nil {
			t.Fatal(err)
		}
		idx, err := reports.LoadIndex(shard.Out)
		if err != nil {
			t.Fatal(err)
		}
		parts = append(parts, idx)
	}
	got, err := reports.MergeIndexes(parts, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !got.Complete || len(got.Cells) != len(want.Cells) {
		t.Fatalf("merged: complete %v, %d cells; want %d", got.Complete, len(got.Cells), len(want.Cells))
	}
	for i, w := range want.Cells {
		g := got.Cells[i]
		if g.Server != w.Server || g.Topology != w.Topology || g.Client != w.Client || g.Fault != w.Fault || g.Seed != w.Seed || g.Outcome != w.Outcome {
			t.Errorf("cell %d: merged %s %s %s %s seed %d %s; unsharded %s %s %s %s seed %d %s", i,
				g.Server, g.Topology, g.Client, g.Fault, g.Seed, g.Outcome, w.Server, w.Topology, w.Client, w.Fault, w.Seed, w.Outcome)
		}
		if w.Fault == "script-flush" && (w.Outcome != reports.CellNotReproduced || g.Result == nil) {
			t.Errorf("%s under script-flush: %s (%s), result loaded %v", w.Client, w.Outcome, w.Reason, g.Result != nil)
		}
	}
	if _, err := reports.MergeIndexes(parts[:2], nil); err == nil {
		t.Error("two of three shards merged without complaint")
	}
}

// TestStopOnViolation: a run stops, checked and written, once the live
// check finds a double holder. The client claims every acquire without
// asking the server, so two workers hold the lock within the first
// operations, whatever the timing.
func TestStopOnViolation(t *testing.T) {
	unregister, err := lockclient.Register("test-always-acquires", lockclient.Traits{}, func(cfg lockclient.Config) (lockclient.Client, error) {
		c, err := lockclient.NewClient("native", cfg)
		return alwaysAcquires{c}, err
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(unregister)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	topo := standalone(ctx, t)
	s := scenarios.Scenario{ServerSettings: scenarios.ServerSettings{Server: "valkey-9.1"}, ClientSettings: scenarios.ClientSettings{Client: "test-always-acquires"}, TrafficSettings: scenarios.TrafficSettings{Duration: time.Minute, TTL: time.Second, Seed: 1}}
	o, err := ExecuteOn(ctx, topo, s, Options{Out: t.TempDir(), StopOnViolation: true})
	if err != nil {
		t.Fatal(err)
	}
	if !o.Stopped || o.Interrupted || o.Check.Verdict != checker.Violated {
		t.Fatalf("stopped %v, interrupted %v, verdict %s; want a violated run stopped early", o.Stopped, o.Interrupted, o.Check.Verdict)
	}
	if d := time.Duration(o.History.Meta.DurationNs); d > 30*time.Second {
		t.Errorf("the run went on for %v of its minute", d)
	}
	if len(o.Result.Notes) == 0 || !strings.Contains(o.Result.Notes[len(o.Result.Notes)-1], "--stop-on-violation") {
		t.Errorf("result notes %q do not say the run was stopped", o.Result.Notes)
	}
}

// alwaysAcquires reports every acquire as held with a new token.
type alwaysAcquires struct{ lockclient.Client }

func (alwaysAcquires) Acquire(context.Context, string, time.Duration) lockclient.Result {
	return lockclient.Result{Outcome: history.OK, Token: fmt.Sprint(time.Now().UnixNano())}
}

// standalone starts a standalone valkey-9.1 for t, torn down when t ends.
func standalone(ctx context.Context, t *testing.T) *topology.Topology {
	t.Helper()
	topo, err := topology.Start(ctx, eng(t), build(t, "valkey-9.1"), topology.Standalone)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := Teardown(context.Background(), topo); err != nil {
			t.Error(err)
		}
	})
	return topo
}
