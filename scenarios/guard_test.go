package scenarios

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/lockcheck/lockcheck/scenarios/fault"
	"github.com/lockcheck/lockcheck/scenarios/lockclient"
	"github.com/lockcheck/lockcheck/topology"
)

// panicFault is a fault whose injection panics.
type panicFault struct{}

func (panicFault) Name() string                 { return "test-panic" }
func (panicFault) Available(topology.Kind) bool { return true }
func (panicFault) Inject(context.Context, fault.Env) error {
	panic("the fault broke")
}

// panicRelease is the native client whose release panics, as a client
// library might.
type panicRelease struct{ lockclient.Client }

func (panicRelease) Release(context.Context, string, string) lockclient.Result {
	panic("the client library broke")
}

// TestPanicEndsTheRun shows that a panic in a worker's client or in a fault
// ends the run with a *PanicError, early, instead of ending the process
// before the caller tears the topology down.
func TestPanicEndsTheRun(t *testing.T) {
	topo := sharedStandalone(t, "valkey-9.1")
	unregister, err := lockclient.Register("test-panic-release", lockclient.Traits{}, func(cfg lockclient.Config) (lockclient.Client, error) {
		c, err := lockclient.NewClient("native", cfg)
		return panicRelease{c}, err
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(unregister)
	unregisterFault, err := fault.Register(panicFault{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(unregisterFault)

	cases := []struct {
		name, client, where string
		faults              []string
	}{
		{"worker", "test-panic-release", "worker", nil},
		{"fault", "native", "fault schedule", []string{panicFault{}.Name()}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			const duration = 40 * time.Second
			w := Workload{Scenario: Scenario{ClientSettings: ClientSettings{Client: c.client}, FaultSettings: FaultSettings{Faults: c.faults}, TrafficSettings: TrafficSettings{Clients: 3, Keys: 1, TTL: 300 * time.Millisecond, Duration: duration, Seed: 1}}.WithDefaults()}
			start := time.Now()
			res, err := Chaos{Workload: w}.Run(context.Background(), topo)
			took := time.Since(start)
			var pe *PanicError
			if !errors.As(err, &pe) {
				t.Fatalf("Run returned %v, %v; want a *PanicError", res, err)
			}
			if !strings.HasPrefix(pe.Where, c.where) || !strings.Contains(pe.Error(), "broke") || len(pe.Stack) == 0 {
				t.Fatalf("panic error %q in %q, stack %d bytes", pe.Error(), pe.Where, len(pe.Stack))
			}
			if took > duration/2 {
				t.Fatalf("the run went on for %v after the panic", took)
			}
			t.Logf("%v after %v", err, took.Round(time.Millisecond))
		})
	}
}
