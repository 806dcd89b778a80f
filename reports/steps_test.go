package reports

import (
	"strings"
	"testing"

	"github.com/lockcheck/lockcheck/checker"
	"github.com/lockcheck/lockcheck/history"
)

// TestSteps builds the step table from windows that recorded servers: the
// servers that can lead and lack the client's commands, the replicas
// whose link is down or that lack what their primary accepts, and the
// failing findings counted in each window.
func TestSteps(t *testing.T) {
	h := &history.History{Faults: []history.Fault{
		{Name: "kill-primary", Start: 1, End: 2}, // no servers recorded: not a step
		{Name: "rolling-upgrade", Detail: "step 1 of 7: n1 (replica) on valkey-9.1", Start: 10, End: 20, Nodes: []history.NodeState{
			{Name: "n0", Version: "8.0.1", Role: "primary", CanLead: true, Probed: true, Missing: []string{"SET IFEQ", "DELIFEQ"}},
			{Name: "n1", Version: "9.1.2", Role: "replica", Following: "n0", Link: "up", CanLead: true, Probed: true},
			{Name: "n2", Version: "8.0.1", Role: "replica", Following: "n0", Link: "down", Probed: true, Missing: []string{"SET IFEQ", "DELIFEQ"}},
		}},
		{Name: "rolling-upgrade", Detail: "step 3 of 7: failover", Start: 30, End: 40, Nodes: []history.NodeState{
			{Name: "n1", Version: "9.1.2", Role: "primary", CanLead: true, Probed: true},
			{Name: "n0", Version: "8.0.1", Role: "replica", Following: "n1", Link: "up", CanLead: true, Probed: true, Missing: []string{"SET IFEQ", "DELIFEQ"}},
		}},
	}}
	checks := checker.Checks{{Name: checker.Rejected, InWindows: map[int64]int{10: 3, 1: 7}}}
	steps := Steps(h, checks)
	if len(steps) != 2 {
		t.Fatalf("%d steps, want the 2 windows that recorded servers", len(steps))
	}
	s1, s3 := steps[0], steps[1]
	if len(s1.Lacking) != 1 || !strings.HasPrefix(s1.Lacking[0], "n0 (8.0.1) lacks SET IFEQ, DELIFEQ") {
		t.Errorf("step 1 lacking %v: want n0 only (n2 cannot lead)", s1.Lacking)
	}
	if len(s1.Links) != 1 || s1.Links[0] != "n2: down" {
		t.Errorf("step 1 links %v", s1.Links)
	}
	if len(s1.Behind) != 0 {
		t.Errorf("step 1 behind %v: no replica lacks what its 8.0 primary has", s1.Behind)
	}
	if s1.Found[checker.Rejected] != 3 || s3.Found != nil {
		t.Errorf("found %v and %v: want rejected 3 in step 1 only", s1.Found, s3.Found)
	}
	if len(s3.Behind) != 1 || s3.Behind[0] != "n0 (8.0.1) lacks SET IFEQ, which its primary n1 (9.1.2) accepts" {
		t.Errorf("step 3 behind %v", s3.Behind)
	}
	if !strings.Contains(s3.Understood(), "n0 (8.0.1) lacks") {
		t.Errorf("step 3 reads %q", s3.Understood())
	}
}
