package harness

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/lockcheck/lockcheck/checker"
	"github.com/lockcheck/lockcheck/scenarios"
	"github.com/lockcheck/lockcheck/scenarios/fault"
	"github.com/lockcheck/lockcheck/topology"
)

// TestMigrateSlotAtomic runs the native client on a valkey-9.1 cluster for
// 20 s with migrate-slot pinned at 5 s: the history must record the fault
// window with the method and the slot's new owner, and the verdict must be
// lock-correct. What it asserts does not hang on the machine's speed: the
// atomic migration of one slot either ends within its bound (30 s + TTL)
// or the window says it did not, and a correct lock stays correct while
// its slot moves, whenever the move lands among the workers' calls.
func TestMigrateSlotAtomic(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	key := scenarios.LockKey(0)
	s := scenarios.Scenario{
		ServerSettings: scenarios.ServerSettings{Server: "valkey-9.1", Topology: topology.Cluster},
		ClientSettings: scenarios.ClientSettings{Client: "native"},
		FaultSettings: scenarios.FaultSettings{Faults: []string{fault.MigrateSlot.Name()},
			Events: []fault.Event{{At: 5 * time.Second, Fault: fault.MigrateSlot.Name(), Key: key}}},
		TrafficSettings: scenarios.TrafficSettings{Duration: 20 * time.Second, TTL: 5 * time.Second, Seed: 1},
	}
	o, err := Execute(ctx, eng(t), s, Options{Out: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	var wins []string
	for _, w := range o.History.Faults {
		if w.Name != fault.MigrateSlot.Name() {
			continue
		}
		wins = append(wins, w.Detail)
		if w.Unmet != "" {
			t.Fatalf("migrate-slot did not move the slot: %s (detail %q)", w.Unmet, w.Detail)
		}
		if !strings.Contains(w.Detail, "by "+string(topology.MigrateValkeyAtomic)) || !strings.Contains(w.Detail, "moved in") {
			t.Fatalf("window detail %q: want the method and the move", w.Detail)
		}
		if w.Promoted == "" || w.Promoted == w.Target {
			t.Fatalf("window %+v: want the new owner (promoted) other than the source (target)", w)
		}
	}
	if len(wins) != 1 {
		t.Fatalf("%d migrate-slot windows, want 1: %v (notes %v)", len(wins), wins, o.Notes)
	}
	if err := checker.ExpectLockCorrect.Meets(o.Check, o.History.Meta.Fenced); err != nil {
		t.Fatalf("native under migrate-slot is not lock-correct (run folder %s): %v", o.Out, err)
	}
	t.Logf("%s; class %s", wins[0], o.Check.Class)
}
