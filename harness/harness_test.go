package harness

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/lockcheck/lockcheck/reports"
	"github.com/lockcheck/lockcheck/scenarios"
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

func fault(t *testing.T, name string) scenarios.Fault {
	t.Helper()
	f, err := scenarios.LookupFault(name)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// TestLayout: every combination has a cell; only the ones that can run
// become runs, each with a seed of its own and the command that replays it.
func TestLayout(t *testing.T) {
	m := Matrix{
		Builds:   []MatrixBuild{{Build: build(t, "valkey-9.1")}, {Build: build(t, "valkey-9.0"), Unavailable: "no image"}},
		Kinds:    []topology.Kind{topology.Standalone, topology.Sentinel},
		Clients:  []string{"native", "external:/usr/bin/python3 adapter.py"},
		Faults:   []scenarios.Fault{fault(t, "kill-primary"), fault(t, "clock-jump")},
		Duration: 40 * time.Second, TTL: 15 * time.Second, Seed: 7,
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
		if !strings.Contains(c.Replay, "--seed "+strconv.FormatInt(c.Seed, 10)) || !strings.Contains(c.Replay, "--server valkey-9.1") {
			t.Fatalf("replay %q", c.Replay)
		}
		if strings.HasPrefix(r.client, "external:") && !strings.Contains(c.Replay, `"external:/usr/bin/python3 adapter.py"`) {
			t.Fatalf("replay does not quote the external command: %q", c.Replay)
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

// TestDefaults: zero fields take Defaults; work follows the TTL unless
// given.
func TestDefaults(t *testing.T) {
	r := Run{TTL: 10 * time.Second}.WithDefaults()
	if r.WorkMin != 2*time.Second || r.WorkMax != 10*time.Second || r.Clients != Defaults.Clients || r.Duration != Defaults.Duration {
		t.Fatalf("%+v", r)
	}
	if r := (Run{WorkMin: time.Second}).WithDefaults(); r.WorkMin != time.Second || r.TTL != Defaults.TTL {
		t.Fatalf("%+v", r)
	}
}

var (
	engine *topology.Engine
	engErr error
)

func TestMain(m *testing.M) {
	topology.Defaults()
	engine, engErr = topology.Connect(context.Background(), nil)
	code := m.Run()
	if engine != nil {
		engine.Close()
	}
	os.Exit(code)
}

func eng(t *testing.T) *topology.Engine {
	t.Helper()
	if engErr != nil {
		t.Fatalf("these tests need a Docker engine: %v", engErr)
	}
	return engine
}

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
		Faults:  []scenarios.Fault{fault(t, "script-flush"), fault(t, "kill-primary")},
		// A lease several times the longest hold (2 TTL/5), so that no
		// holder of the correct client outlives it on a loaded machine.
		Duration: 8 * time.Second, TTL: 5 * time.Second, Seed: 3, Out: out, Log: io.Discard,
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
	// SCRIPT FLUSH cannot hurt a client without scripts, and a run has no
	// stalls unless asked: the correct client is safe.
	if ran.Outcome != reports.CellSafe {
		t.Fatalf("native under script-flush: %s (%s)", ran.Outcome, ran.Reason)
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
	topo, err := Start(ctx, eng(t), build(t, "valkey-9.1"), topology.Sources{}, topology.Standalone, topology.Options{}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := Teardown(context.Background(), topo); err != nil {
			t.Error(err)
		}
	})
	runCtx, stop := context.WithCancel(ctx)
	time.AfterFunc(3*time.Second, stop)
	out := t.TempDir()
	begin := time.Now()
	o, err := Run{Client: "native", Duration: time.Minute, TTL: time.Second, Seed: 1, Out: out}.Execute(runCtx, topo)
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
