package scenarios

import (
	"strings"
	"testing"
	"time"

	"github.com/lockcheck/lockcheck/scenarios/fault"
)

// TestEventText: --fault-at reads what Event.String writes, and says what
// is wrong with what it cannot read.
func TestEventText(t *testing.T) {
	e := fault.Event{At: 2500 * time.Millisecond, Fault: "kill-primary", Key: LockKey(1)}
	back, err := fault.ParseEvent(e.String(), LockKey(0))
	if err != nil || back != e {
		t.Fatalf("%s read back as %+v, %v", e, back, err)
	}
	if d, _ := fault.ParseEvent("clock-jump@1s", LockKey(0)); d.Key != LockKey(0) || d.At != time.Second {
		t.Fatalf("default key: %+v", d)
	}
	for _, bad := range []string{"kill-primary", "no-such-fault@1s", "kill-primary@soon", "kill-primary@-1s"} {
		if _, err := fault.ParseEvent(bad, LockKey(0)); err == nil {
			t.Errorf("%q read without an error", bad)
		}
	}
	s := Scenario{ServerSettings: ServerSettings{Server: "valkey-9.1", Topology: "sentinel"}, FaultSettings: FaultSettings{Faults: []string{"kill-primary"}, Events: []fault.Event{{At: 11 * time.Second, Fault: "kill-primary", Key: LockKey(0)}}}, TrafficSettings: TrafficSettings{Duration: 10 * time.Second}}.WithDefaults()
	if err := s.Validate(); err == nil || !strings.Contains(err.Error(), "outside the run") {
		t.Fatalf("a step past the run's end: %v", err)
	}
	s.Events[0] = fault.Event{At: time.Second, Fault: "clock-jump", Key: LockKey(0)}
	if err := s.Validate(); err == nil || !strings.Contains(err.Error(), "not among the scenario's faults") {
		t.Fatalf("a step of a fault not listed: %v", err)
	}
}
