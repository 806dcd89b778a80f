package harness

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/lockcheck/lockcheck/reports"
	"github.com/lockcheck/lockcheck/scenarios"
	"github.com/lockcheck/lockcheck/scenarios/lockclient"
)

// TestShrink shrinks a run of a client that reports every acquire as
// held, on a real server: the double holder needs two clients' acquires
// and nothing else, so the shrink must end with a script of those two
// steps (trace.json), at least 5 times fewer operations, confirmed in
// every replay, and a run folder that holds the reproducer and its
// shrink.json.
func TestShrink(t *testing.T) {
	unregister, err := lockclient.Register("test-always-acquires-shrink", lockclient.Traits{}, func(cfg lockclient.Config) (lockclient.Client, error) {
		c, err := lockclient.NewClient("native", cfg)
		return alwaysAcquires{c}, err
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(unregister)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	build(t, "valkey-9.1")
	from := filepath.Join(t.TempDir(), "run")
	// the workload's noise is off already: the cuts left to try are few
	// (clients, keys, the run's length), and the test short
	s := scenarios.Scenario{
		ServerSettings:  scenarios.ServerSettings{Server: "valkey-9.1"},
		ClientSettings:  scenarios.ClientSettings{Client: "test-always-acquires-shrink"},
		TrafficSettings: scenarios.TrafficSettings{Duration: 5 * time.Second, TTL: time.Second, Seed: 3, Clients: 6, Keys: 4, BackoffMin: 50 * time.Millisecond, BackoffMax: 50 * time.Millisecond, ObserveEvery: scenarios.None},
	}.Quiet()
	s.LateRate, s.AbandonRate = scenarios.None, scenarios.None
	o, err := Execute(ctx, eng(t), s, Options{Out: from, StopOnViolation: true})
	if err != nil {
		t.Fatal(err)
	}
	if o.Check.Verdict != "violated" {
		t.Fatalf("the run to shrink: %s, want violated", o.Check.Verdict)
	}
	out := filepath.Join(t.TempDir(), "shrunk")
	res, err := Shrink(ctx, eng(t), from, ShrinkOptions{Out: out, Budget: 4 * time.Minute, Tries: 1, Confirm: 2})
	if err != nil {
		t.Fatal(err)
	}
	for _, st := range res.Steps {
		t.Logf("%s: %d of %d, %.1f s", st.What, st.Reproduced, st.Runs, st.Seconds)
	}
	if !res.Confirmed || res.Reproduced != 2 || res.Kind != "double_holder" {
		t.Fatalf("%+v: want double_holder confirmed in 2 of 2", res)
	}
	if res.Before.Clients != 6 || res.After.Clients != 2 || res.After.Keys != 1 || res.After.Ops*5 > res.Before.Ops {
		t.Errorf("before %s, after %s: want 6 clients cut to 2 on one key, 5 times fewer operations", res.Before, res.After)
	}
	tr, err := scenarios.LoadTrace(filepath.Join(out, scenarios.TraceFileName))
	if err != nil {
		t.Fatal(err)
	}
	if tr.Workers != 2 || len(tr.Steps) != 2 || tr.Steps[0].Kind != scenarios.StepAcquire || tr.Steps[1].Kind != scenarios.StepAcquire || len(res.Script) != 2 {
		t.Errorf("the script %v: want two workers' acquires", tr.Describe())
	}
	var back reports.Shrunk
	b, err := os.ReadFile(filepath.Join(out, reports.ShrinkFileName))
	if err == nil {
		err = json.Unmarshal(b, &back)
	}
	if err != nil || back.Command != res.Command || len(back.Steps) == 0 {
		t.Fatalf("shrink.json: %v, %+v", err, back)
	}
	if _, err := os.Stat(filepath.Join(out, "tries")); !os.IsNotExist(err) {
		t.Errorf("tries/ left behind: %v", err)
	}
	for _, name := range []string{"history.json", "result.json", "report.html"} {
		if _, err := os.Stat(filepath.Join(out, name)); err != nil {
			t.Errorf("the reproducer's %s: %v", name, err)
		}
	}
}

// TestExecuteTrace plays a hand-written script on a real server: worker
// 0 takes the lock, clock-jump moves the server's clock past its lease
// right after that acquire (the fault step waits for the acquire before
// it, not for one to come), and worker 1 is granted the lock while
// worker 0's lease still runs on its own clock: a double holder, in a run
// folder that holds the trace.
func TestExecuteTrace(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	build(t, "valkey-9.1")
	// the jump (+2 TTL, by a docker exec) has 1.5 s to take effect before
	// worker 1 tries, and worker 0's lease still 3.5 s to run
	s := scenarios.Scenario{ServerSettings: scenarios.ServerSettings{Server: "valkey-9.1"}, ClientSettings: scenarios.ClientSettings{Client: "native"}, FaultSettings: scenarios.FaultSettings{Faults: []string{"clock-jump"}}, TrafficSettings: scenarios.TrafficSettings{TTL: 5 * time.Second}}
	tr := scenarios.Trace{Format: scenarios.TraceFormat, Scenario: s, Key: "lock:{k1}", Workers: 2, Steps: []scenarios.TraceStep{
		{Kind: scenarios.StepAcquire, Worker: 0, After: scenarios.AfterPrevious, Granted: true},
		{Kind: scenarios.StepFault, Fault: "clock-jump", After: scenarios.AfterPrevious},
		{Kind: scenarios.StepAcquire, Worker: 1, After: scenarios.AfterFaultStart, FaultStep: 1, DelayMs: 1500, Granted: true},
	}}
	out := filepath.Join(t.TempDir(), "trace")
	o, err := ExecuteTrace(ctx, eng(t), tr, Options{Out: out})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(o.Check.Checks.FailingKinds(), "double_holder") {
		for _, op := range o.History.Ops {
			t.Logf("%+v", op)
		}
		t.Logf("faults %+v", o.History.Faults)
		t.Fatalf("verdict %s with %v, want a double holder", o.Check.Verdict, o.Check.Checks.FailingKinds())
	}
	h := o.History
	if len(h.Faults) != 1 || len(h.Ops) < 2 || h.Ops[0].Outcome != "ok" {
		t.Fatalf("faults %+v, ops %+v: want worker 0's granted acquire and one clock-jump window", h.Faults, h.Ops)
	}
	// clock-jump waits up to 5 s for an acquire it has not seen
	if wait := time.Duration(h.Faults[0].Start - h.Ops[0].Return); wait > 3*time.Second {
		t.Errorf("the jump came %s after worker 0's acquire: the fault step did not take that acquire as the one it waits for", wait)
	}
	back, err := scenarios.LoadTrace(filepath.Join(out, scenarios.TraceFileName))
	if err != nil || len(back.Steps) != 3 {
		t.Errorf("trace.json: %v, %d steps", err, len(back.Steps))
	}
}
