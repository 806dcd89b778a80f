package checker

import (
	"strings"
	"testing"
)

func TestExpectations(t *testing.T) {
	result := func(class Class, checks ...Check) *Result {
		return &Result{Class: class, Checks: checks, Summary: string(class)}
	}
	safe := result(ClassSafe, Check{Name: DoubleHolder, Status: Pass})
	fenced := result(ClassFenced, Check{Name: DoubleHolder, Status: Allowed, Count: 2, Summary: "2 double holders, allowed"}, Check{Name: Fence, Status: Pass})
	violated := result(ClassViolated, Check{Name: DoubleHolder, Status: Fail, Count: 3, Summary: "3 double holders"}, Check{Name: Fence, Status: Pass})
	undecided := result(ClassUnknown, Check{Name: Linearizability, Status: Unknown, Summary: "timed out"})
	for _, tc := range []struct {
		e      Expectation
		r      *Result
		fenced bool
		want   string // "" meets; else a part of the error
	}{
		{ExpectSafe, safe, false, ""},
		{ExpectSafe, safe, true, ""},
		{ExpectSafe, fenced, true, "expected safe, got fenced: double_holder allowed (2 double holders, allowed), fence pass"},
		{ExpectSafe, violated, false, "expected safe, got violated: double_holder fail (3 double holders)"},
		{ExpectSafe, undecided, false, "linearizability unknown (timed out)"},
		{ExpectFenceHolds, safe, true, ""},
		{ExpectFenceHolds, fenced, true, ""},
		{ExpectFenceHolds, violated, true, "got violated: double_holder fail"},
		{ExpectFenceHolds, undecided, true, "got unknown"},
		{ExpectFenceHolds, safe, false, "the client draws no fences"},
	} {
		err := tc.e.Meets(tc.r, tc.fenced)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s on %s: %v, want met", tc.e, tc.r.Class, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s on %s (fenced %v): %v, want an error with %q", tc.e, tc.r.Class, tc.fenced, err, tc.want)
		}
	}
	if _, err := ParseExpectation("fence_holds"); err == nil || !strings.Contains(err.Error(), "safe, fence-holds") {
		t.Errorf("ParseExpectation of a wrong name: %v", err)
	}
}
