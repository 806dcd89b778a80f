package harness

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lockcheck/lockcheck/checker"
	"github.com/lockcheck/lockcheck/reports"
	"github.com/lockcheck/lockcheck/scenarios"
	"github.com/lockcheck/lockcheck/scenarios/fault"
	"github.com/lockcheck/lockcheck/topology"
)

// longFault opens its window and keeps it open for 20 s: longer than any
// run of the test below may last.
type longFault struct{}

func (longFault) Name() string                 { return "test-long-fault" }
func (longFault) Available(topology.Kind) bool { return true }
func (longFault) Inject(ctx context.Context, env fault.Env) error {
	i := env.Rec.FaultStart("test-long-fault", "", "held open for 20 s")
	defer env.Rec.FaultEnd(i)
	select {
	case <-ctx.Done():
	case <-time.After(20 * time.Second):
	}
	return nil
}

// TestAftermathCutShort: a run too short for its fault goes on past its
// duration for the fault's aftermath, at most its duration again, and
// when that bound cuts the aftermath short its verdict is unknown, not
// safe: result.json and the terminal's lines say the race had no time to
// show.
func TestAftermathCutShort(t *testing.T) {
	unregister, err := fault.Register(longFault{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(unregister)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	topo := standalone(ctx, t)
	out := t.TempDir()
	s := scenarios.Scenario{
		ServerSettings:  scenarios.ServerSettings{Server: "valkey-9.1"},
		ClientSettings:  scenarios.ClientSettings{Client: "native"},
		FaultSettings:   scenarios.FaultSettings{Faults: []string{"test-long-fault"}, Events: []fault.Event{{At: 500 * time.Millisecond, Fault: "test-long-fault", Key: scenarios.LockKey(0)}}},
		TrafficSettings: scenarios.TrafficSettings{Duration: 2 * time.Second, TTL: time.Second, Seed: 1, Clients: 2},
	}
	begin := time.Now()
	o, err := ExecuteOn(ctx, topo, s, Options{Out: out})
	if err != nil {
		t.Fatal(err)
	}
	took := time.Since(begin)
	if took < 3*time.Second || took > 15*time.Second {
		t.Fatalf("the run took %v: want its duration (2 s) and up to as long again for the fault's aftermath", took)
	}
	rr, err := reports.LoadRunResult(filepath.Join(out, "result.json"))
	if err != nil {
		t.Fatal(err)
	}
	if rr.Class != checker.ClassNotReproduced || rr.Verdict != checker.Undecided || len(rr.NotReproduced) == 0 ||
		!strings.Contains(rr.NotReproduced[0], "the run ended") || !strings.Contains(rr.NotReproduced[0], "test-long-fault") || !strings.Contains(rr.NotReproduced[0], "no time to show") {
		t.Fatalf("result.json: class %s, verdict %s, not reproduced %q; want not-reproduced, unknown, the race given no time", rr.Class, rr.Verdict, rr.NotReproduced)
	}
	if o.Result.ExitCode != 3 {
		t.Fatalf("exit code %d, want 3 (could not decide)", o.Result.ExitCode)
	}
	var term bytes.Buffer
	reports.WriteVerdict(&term, rr, out)
	if !strings.Contains(term.String(), "not reproduced: "+rr.NotReproduced[0]) || !strings.Contains(term.String(), "verdict: UNKNOWN") {
		t.Fatalf("the terminal's lines:\n%s", term.String())
	}
}
