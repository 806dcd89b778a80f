package scenarios

import (
	"runtime"
	"testing"
)

// TestLeaveCore: overlapping workloads take one core between them, and the
// last to end gives it back.
func TestLeaveCore(t *testing.T) {
	t.Setenv("GOMAXPROCS", "")
	before := runtime.GOMAXPROCS(4)
	defer runtime.GOMAXPROCS(before)
	a := leaveCore()
	b := leaveCore()
	if got := runtime.GOMAXPROCS(0); got != 3 {
		t.Fatalf("two workloads running: GOMAXPROCS %d, want 3", got)
	}
	a()
	a() // a second call gives nothing back twice
	if got := runtime.GOMAXPROCS(0); got != 3 {
		t.Fatalf("one workload still running: GOMAXPROCS %d, want 3", got)
	}
	b()
	if got := runtime.GOMAXPROCS(0); got != 4 {
		t.Fatalf("none running: GOMAXPROCS %d, want 4", got)
	}
	runtime.GOMAXPROCS(1)
	c := leaveCore()
	if got := runtime.GOMAXPROCS(0); got != 1 {
		t.Fatalf("on one core: GOMAXPROCS %d, want 1", got)
	}
	c()
}

// TestLeaveCoreKeepsTheUsersChoice: a GOMAXPROCS in the environment stays.
func TestLeaveCoreKeepsTheUsersChoice(t *testing.T) {
	t.Setenv("GOMAXPROCS", "4")
	before := runtime.GOMAXPROCS(4)
	defer runtime.GOMAXPROCS(before)
	defer leaveCore()()
	if got := runtime.GOMAXPROCS(0); got != 4 {
		t.Fatalf("GOMAXPROCS %d, want the environment's 4", got)
	}
}
