package scenarios

import (
	"context"
	"testing"
	"time"

	"github.com/lockcheck/lockcheck/checker"
	"github.com/lockcheck/lockcheck/scenarios/lockclient"
)

// A quiet holds acquires of its key back until it ends, by its holder or
// by its bound, and leaves the other keys alone.
func TestQuietKeysHoldBack(t *testing.T) {
	q := newQuietKeys()
	end := q.hold("k", time.Minute)
	passed := make(chan bool)
	go func() { passed <- q.wait(context.Background(), "k") }()
	if !q.wait(context.Background(), "other") {
		t.Fatal("a quiet on k held back another key")
	}
	select {
	case <-passed:
		t.Fatal("an acquire of k went ahead during its quiet")
	case <-time.After(50 * time.Millisecond):
	}
	end()
	if !<-passed {
		t.Fatal("the held-back acquire did not go ahead when the quiet ended")
	}
	q.hold("k", 20*time.Millisecond)
	if !q.wait(context.Background(), "k") {
		t.Fatal("a quiet outlived its bound")
	}
	q.hold("k", time.Minute)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if q.wait(ctx, "k") {
		t.Fatal("a wait whose run ended said go ahead")
	}
	var none *quietKeys
	if !none.wait(context.Background(), "k") {
		t.Fatal("no quietKeys held an acquire back")
	}
}

// TestQuietStallsMeetAFreeKey: mutant-reacquire's lie (a nil extend
// followed by a quiet SET NX, reported as an extend) shows only when the
// stalled holder's extend finds the key free. Five workers retrying every
// 5 ms take an expired key within a few milliseconds, before the stall's
// 12-18 ms past the lease end, so only the quiet stalls give the mutant
// its free key: each seed is caught by the linearizability check because
// of them, and the correct client in the same runs is not.
func TestQuietStallsMeetAFreeKey(t *testing.T) {
	topo := sharedStandalone(t, "valkey-9.1")
	raw := direct(t, topo)
	for _, kind := range []string{"mutant-reacquire", "native"} {
		for seed := int64(1); seed <= 3; seed++ {
			flushAll(t, raw)
			s := Scenario{ClientSettings: ClientSettings{Client: kind, CallTimeout: 5 * time.Second},
				TrafficSettings: TrafficSettings{Clients: 6, Keys: 1, TTL: 300 * time.Millisecond, Duration: 3 * time.Second, Seed: seed,
					StallRate: 1, PauseRate: None, LateRate: None, LateReplyRate: None, AbandonRate: None, QuietStallRate: 1,
					BackoffMin: 5 * time.Millisecond, BackoffMax: 5 * time.Millisecond}}.WithDefaults()
			var stats Stats
			w := Workload{Scenario: s, Progress: func(st Stats) { stats = st }}
			h, err := w.Run(context.Background(), lockclient.ConfigFor(topo))
			if err != nil {
				t.Fatal(err)
			}
			r, err := checker.Run(context.Background(), h, checker.OptionsFor(h))
			if err != nil {
				t.Fatal(err)
			}
			lin, _ := r.Checks.Find(checker.Linearizability)
			if stats.QuietStalls == 0 {
				t.Fatalf("%s seed %d: no quiet stall in %v", kind, seed, stats)
			}
			if caught := lin.Status == checker.Fail; caught != (kind == "mutant-reacquire") {
				t.Errorf("%s seed %d, %d quiet stalls: linearizability %s (%s)", kind, seed, stats.QuietStalls, lin.Status, lin.Summary)
			}
		}
	}
}
