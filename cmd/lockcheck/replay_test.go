package main

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"github.com/lockcheck/lockcheck/checker"
)

// A known-bad target reproduces when a replay fails with the same kinds
// of findings: allowed findings and passing checks do not count, and each
// kind counts once.
func TestFailingKinds(t *testing.T) {
	checks := checker.Checks{
		{Name: checker.DoubleHolder, Status: checker.Fail, Findings: []checker.Finding{{Kind: checker.KindDoubleHolder}, {Kind: checker.KindDoubleHolder}}},
		{Name: checker.TTL, Status: checker.Fail, Findings: []checker.Finding{{Kind: checker.KindLateGrant}, {Kind: checker.KindNoExpiry, Allowed: true}}},
		{Name: checker.LostLocks, Status: checker.Allowed, Findings: []checker.Finding{{Kind: checker.KindLostLock, Allowed: true}}},
		{Name: checker.Rejected, Status: checker.Pass},
	}
	if got, want := checks.FailingKinds(), []string{"double_holder", "late_grant"}; !slices.Equal(got, want) {
		t.Fatalf("failing kinds %v, want %v", got, want)
	}
}

func TestReplayCountIsChecked(t *testing.T) {
	var out, errb bytes.Buffer
	code := run([]string{"replay", "--count", "0", t.TempDir()}, &out, &errb)
	if code != 2 || !strings.Contains(errb.String(), "--count 0: want at least 1") {
		t.Fatalf("exit %d, stderr %q", code, errb.String())
	}
}
