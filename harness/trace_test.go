package harness

import (
	"context"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/lockcheck/lockcheck/scenarios"
)

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
