package lockclient

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

// TestConformance runs the adapter check on the shipped Python adapter,
// which passes, and on broken copies of it, each failing at the step that
// catches its fault with the reason named.
func TestConformance(t *testing.T) {
	shipped := strings.TrimPrefix(pythonAdapter(t), ExternalPrefix)
	topo := sharedStandalone(t, "valkey-9.1")
	server := direct(t, topo)
	cfg := ConfigFor(topo)
	cfg.Timeout = 500 * time.Millisecond
	broken := "/usr/bin/python3 -B testdata/broken/"
	for _, tc := range []struct {
		cmd        string
		step, want string // "" passes
	}{
		{shipped, "", ""},
		{shipped + " --mode lua", "", ""},
		{shipped + " --mode lock", "", ""},
		{shipped + " --mode fenced", "", ""},
		{broken + "no_token.py", "acquire a free key", `replied ok without a "token"`},
		{broken + "wrong_token.py", "acquire a free key", "not the token"},
		{broken + "not_json.py", "acquire a free key", `adapter replied "\"OK\""`},
		{broken + "release_del.py", "release with another token", "release replied ok (no error given), want fail"},
		{broken + "timeout_fail.py", "a call past its timeout", "a timeout must be unknown"},
		{broken + "no_timeout.py", "a call past its timeout", "did not answer within"},
	} {
		t.Run(tc.cmd, func(t *testing.T) {
			var passed []string
			c := Conformance{Command: tc.cmd, Config: cfg, Server: server, Step: func(s string) { passed = append(passed, s) }}
			err := c.Run(context.Background())
			if tc.step == "" {
				if err != nil {
					t.Fatalf("the adapter fails the check: %v", err)
				}
				if len(passed) != 13 {
					t.Errorf("%d steps passed, want 13: %v", len(passed), passed)
				}
				return
			}
			var ce *ConformanceError
			if !errors.As(err, &ce) {
				t.Fatalf("want a violation at %q, got %v (passed %v)", tc.step, err, passed)
			}
			if ce.Step != tc.step || !strings.Contains(ce.Err.Error(), tc.want) {
				t.Errorf("violation at %q: %v; want at %q with %q", ce.Step, ce.Err, tc.step, tc.want)
			}
		})
	}
}
