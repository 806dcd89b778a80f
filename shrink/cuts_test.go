package shrink

import (
	"strings"
	"testing"
	"time"

	"github.com/lockcheck/lockcheck/scenarios"
	"github.com/lockcheck/lockcheck/scenarios/fault"
)

// TestCutsEachTakeSomethingAway: every cut is valid, keeps the seed, and
// is smaller than the scenario it came from in the way its words say;
// a shorter lease goes first, the noise next, a shorter run before the
// fault steps, clients and keys.
func TestCutsEachTakeSomethingAway(t *testing.T) {
	s := scenarios.Scenario{ServerSettings: scenarios.ServerSettings{Server: "valkey-9.1", Topology: "sentinel"}, ClientSettings: scenarios.ClientSettings{Client: "native"}, FaultSettings: scenarios.FaultSettings{Faults: []string{"kill-primary", "clock-jump"}}, TrafficSettings: scenarios.TrafficSettings{Duration: 60 * time.Second, TTL: 2 * time.Second, Seed: 7, Clients: 6, Keys: 3}}.WithDefaults()
	p, err := Pinned(s)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Events) < 2 {
		t.Fatalf("pinned %d fault steps, want the seed's several", len(p.Events))
	}
	if got, _ := p.Schedule(); len(got) != len(p.Events) {
		t.Fatalf("a pinned scenario's schedule has %d steps, want its %d events", len(got), len(p.Events))
	}
	cuts := Cuts(p, 10*time.Second)
	var whats []string
	for _, c := range cuts {
		whats = append(whats, c.What)
	}
	if len(cuts) < 2 || cuts[0].What != "TTL 1s (was 2s), the run's times scaled with it" || !strings.HasPrefix(cuts[1].What, "the workload's noise off") || cuts[4].What != "1 clients (was 6)" || cuts[8].What != "no stalls" || !containsCut(cuts[:4], "duration 11s (was 1m0s)") || !containsCut(cuts[:4], "duration 21s (was 1m0s)") || !strings.HasPrefix(cuts[len(cuts)-1].What, "1 key") {
		t.Fatalf("cuts %q, want the TTL halved first, all the noise off next, the run cut to 11s (just past the violation's 10s) and 21s (twice it + 1s), fewer clients, the stalls alone, the fault steps, and one key last", whats)
	}
	half := cuts[0].Scenario
	if half.Duration != p.Duration/2 || half.WorkMax != p.WorkMax/2 || half.Events[0].At != (p.Events[0].At/2).Round(time.Millisecond) || half.BackoffMin != p.BackoffMin {
		t.Errorf("TTL halved: duration %s, work max %s, first step %s, backoff min %s; want the first three halved, the last kept", half.Duration, half.WorkMax, half.Events[0].At, half.BackoffMin)
	}
	seen := map[string]bool{}
	for _, c := range cuts {
		cs := c.Scenario
		if err := cs.Validate(); err != nil {
			t.Errorf("%s: %v", c.What, err)
		}
		if cs.Seed != p.Seed {
			t.Errorf("%s: seed %d, want %d kept", c.What, cs.Seed, p.Seed)
		}
		if cs.Clients > p.Clients || cs.Keys > p.Keys || cs.Duration > p.Duration || cs.TTL > p.TTL || len(cs.Events) > len(p.Events) {
			t.Errorf("%s: %d clients, %d keys, %s, %d steps: bigger than %d, %d, %s, %d", c.What, cs.Clients, cs.Keys, cs.Duration, len(cs.Events), p.Clients, p.Keys, p.Duration, len(p.Events))
		}
		if seen[cs.Command()] {
			t.Errorf("%s: the same scenario as an earlier cut", c.What)
		}
		seen[cs.Command()] = true
	}
	for _, want := range []string{"without fault step", "earlier", "1 clients", "2 clients", "1 key", "no stalls", "no pauses", "no observer"} {
		if !containsCut(cuts, want) {
			t.Errorf("no cut %q among %d", want, len(cuts))
		}
	}
}

// TestCutToOneKeyMovesTheSteps: with one key left, every fault step
// strikes that key's primary.
func TestCutToOneKeyMovesTheSteps(t *testing.T) {
	s := scenarios.Scenario{ServerSettings: scenarios.ServerSettings{Server: "valkey-9.1", Topology: "sentinel"}, ClientSettings: scenarios.ClientSettings{Client: "native"}, FaultSettings: scenarios.FaultSettings{Faults: []string{"kill-primary"}, Events: []fault.Event{{At: 3 * time.Second, Fault: "kill-primary", Key: scenarios.LockKey(2)}}}, TrafficSettings: scenarios.TrafficSettings{Duration: 20 * time.Second, Seed: 1, Clients: 2, Keys: 3}}.WithDefaults()
	for _, c := range Cuts(s, 0) {
		if c.What == "1 key (was 3)" {
			if c.Scenario.Events[0].Key != scenarios.LockKey(0) {
				t.Fatalf("step on %s, want %s", c.Scenario.Events[0].Key, scenarios.LockKey(0))
			}
			if s.Events[0].Key != scenarios.LockKey(2) {
				t.Fatal("the cut changed the scenario it came from")
			}
			return
		}
	}
	t.Fatal("no cut to one key")
}

func containsCut(cuts []Cut, what string) bool {
	for _, c := range cuts {
		if strings.Contains(c.What, what) {
			return true
		}
	}
	return false
}
