package checker

import (
	"context"
	"strings"
	"testing"

	"github.com/lockcheck/lockcheck/history"
)

// TestNotReproduced: a clean history whose fault could not make its
// moment, or that ended less than a lease after its last fault step, is
// unknown and says why, never safe; a history that showed the fault's
// effect keeps its class, and a fault with its aftermath seen stays safe.
func TestNotReproduced(t *testing.T) {
	clean := func() *history.History {
		h := hist(acq(1, "a1", ok, 0, 1), rel(1, "a1", ok, 10, 11), acq(2, "b1", ok, 2000, 2001), rel(2, "b1", ok, 2010, 2011))
		h.Meta.TTLms = 1000
		h.Scenario = []byte(`{}`) // a run of lockcheck's
		return h
	}
	unmet := fault("kill-primary", 5, 500)
	unmet.Unmet = "no acquire landed on the primary alone within 17s"
	promoted := fault("kill-primary", 5, 1900)
	promoted.PromotedAt = 1500e6
	cases := []struct {
		name   string
		h      *history.History
		class  Class
		reason string
	}{
		{"aftermath seen", withFaults(clean(), fault("kill-primary", 5, 500)), ClassSafe, ""},
		{"no fault", clean(), ClassSafe, ""},
		{"unmet moment", withFaults(clean(), unmet), ClassNotReproduced, "kill-primary: no acquire landed"},
		{"ended after the promotion", withFaults(clean(), promoted), ClassNotReproduced, "the run ended 0.5 s after kill-primary's promotion"},
		{"still under way", withFaults(clean(), fault("clock-jump", 5, 0)), ClassNotReproduced, "still under way"},
		{"no step ran", func() *history.History { h := clean(); h.Meta.Faults = []string{"clock-jump"}; return h }(), ClassNotReproduced, "no step of clock-jump ran"},
		{"a finding stands", withFaults(hist(acq(1, "a1", ok, 0, 1), acq(2, "b1", ok, 2, 3)), unmet), ClassViolated, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res, err := Run(context.Background(), c.h, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if res.Class != c.class {
				t.Fatalf("class %s (%s), want %s", res.Class, res.Summary, c.class)
			}
			if c.class == ClassNotReproduced {
				if res.Verdict != Undecided || res.ExitCode != 3 || !strings.Contains(res.Summary, c.reason) || len(res.NotReproduced) == 0 {
					t.Fatalf("verdict %s, exit %d, summary %q; want unknown, 3 and %q", res.Verdict, res.ExitCode, res.Summary, c.reason)
				}
			} else if len(res.NotReproduced) > 0 {
				t.Fatalf("not reproduced %v on a run that showed its fault", res.NotReproduced)
			}
		})
	}
}
