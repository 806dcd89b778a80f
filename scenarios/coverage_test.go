package scenarios

import (
	"testing"
	"time"

	"github.com/lockcheck/lockcheck/history"
)

// TestCoverageGoal: the goal asks for what the workload can give (no
// extends when no hold outlasts an extend period, no stalls or pauses
// when the workload draws none, holds after the faults only when there
// are faults), and the watch meets it only once every part is there and,
// with faults, a lease's length after the last one.
func TestCoverageGoal(t *testing.T) {
	quiet := Scenario{TrafficSettings: TrafficSettings{Clients: 4, TTL: time.Second, WorkMin: 50 * time.Millisecond, WorkMax: 300 * time.Millisecond}}.Quiet().WithDefaults()
	if g := quiet.CoverageGoal(0); g.Holds != 10 || g.Contended != 4 || g.Extends != 0 || g.Stalls != 0 || g.Pauses != 0 || g.HoldsAfterFaults != 0 {
		t.Fatalf("quiet goal %+v: want 10 holds, 4 contended, nothing else", g)
	}
	noisy := Scenario{TrafficSettings: TrafficSettings{Clients: 6, TTL: time.Second, WorkMax: 2 * time.Second}}.WithDefaults()
	g := noisy.CoverageGoal(2)
	if g.Holds != 12 || g.Extends != 3 || g.Stalls != 2 || g.Pauses != 1 || g.Faults != 2 || g.HoldsAfterFaults != 2 {
		t.Fatalf("noisy goal %+v", g)
	}
	done := 0
	w := coverageWatch{goal: g, after: time.Second, faults: func() int { return done }}
	start := time.Now()
	enough := Stats{Acquired: 20, AcquireFailed: 30, Extended: 5, Stalls: 3, Pauses: 1}
	if w.update(enough, start) {
		t.Fatal("met with no fault step over")
	}
	done = 2
	if w.update(enough, start) {
		t.Fatal("met with no hold after the faults")
	}
	enough.Acquired += 2
	if w.update(enough, start.Add(500*time.Millisecond)) {
		t.Fatal("met before a lease's length had passed after the last fault")
	}
	if !w.update(enough, start.Add(time.Second)) {
		t.Fatalf("not met: %s", w.cov)
	}
	if w.cov.HoldsAfterFaults != 2 || w.cov.Faults != 2 || w.cov.Planned != 2 {
		t.Fatalf("coverage %+v", w.cov)
	}
	if covers(history.Coverage{Holds: 20, Contended: 30, Extends: 5, Stalls: 3, Faults: 2, HoldsAfterFaults: 2}, g) {
		t.Fatal("met without a pause")
	}
}
