package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/lockcheck/lockcheck/checker"
)

// Without --expect a run exits by lock-correct: an unfenced client's stale
// writes pass, lies and double holders fail, an undecided check is 3;
// with --expect the named expectation alone decides, 0 or 1.
func TestGateExitCode(t *testing.T) {
	for _, tc := range []struct {
		g      gate
		class  checker.Class
		fenced bool
		code   int
		line   string
	}{
		{gate{}, checker.ClassSafe, false, 0, "gate lock-correct: met (safe)"},
		{gate{}, checker.ClassStale, false, 0, "gate lock-correct: met (stale-writes)"},
		{gate{}, checker.ClassStale, true, 1, "gate lock-correct: NOT met"},
		{gate{}, checker.ClassViolated, false, 1, "gate lock-correct: NOT met: expected lock-correct, got violated"},
		{gate{}, checker.ClassUnknown, false, 3, "gate lock-correct: NOT met"},
		{gate{expect: checker.ExpectSafe}, checker.ClassStale, false, 1, "gate safe: NOT met: expected safe, got stale-writes"},
		{gate{expect: checker.ExpectSafe}, checker.ClassUnknown, false, 1, "gate safe: NOT met"},
		{gate{expect: checker.ExpectFenceHolds}, checker.ClassFenced, true, 0, "gate fence-holds: met (fenced)"},
	} {
		var out bytes.Buffer
		r := &checker.Result{Class: tc.class, Summary: string(tc.class)}
		if code := tc.g.exitCode(r, tc.fenced, &out); code != tc.code || !strings.Contains(out.String(), tc.line) {
			t.Errorf("%q on %s (fenced %v): exit %d, %q; want %d with %q", tc.g.expect, tc.class, tc.fenced, code, out.String(), tc.code, tc.line)
		}
	}
}
