package synth_test

import (
	"context"
	"reflect"
	"testing"

	"github.com/lockcheck/lockcheck/checker"
	"github.com/lockcheck/lockcheck/history"
	"github.com/lockcheck/lockcheck/history/synth"
)

// TestGeneratedHistoriesAreSafe: the generator simulates a correct server
// and correct clients, so the checker must find nothing on any seed, and the
// histories must exercise the paths that matter (expiry, lost locks,
// unknown outcomes, fences).
func TestGeneratedHistoriesAreSafe(t *testing.T) {
	for seed := range int64(6) {
		h := synth.Generate(seed, 20000, 1+int(seed)*3, 5*(1+int(seed)*3))
		res, err := checker.Run(context.Background(), h, checker.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if res.Verdict != checker.Safe {
			for _, c := range res.Checks {
				t.Logf("%s: %s %s", c.Name, c.Status, c.Summary)
			}
			t.Fatalf("seed %d: %s", seed, res.Summary)
		}
		var unknowns, fenced, lost int
		for _, op := range h.Ops {
			switch {
			case op.Outcome == history.Unknown:
				unknowns++
			case op.Kind == history.Write && op.Outcome == history.OK:
				fenced++
			case op.Outcome == history.Fail && (op.Kind == history.Release || op.Kind == history.Extend):
				lost++
			}
		}
		if len(h.Ops) != 20000 || unknowns == 0 || fenced == 0 || lost == 0 {
			t.Errorf("seed %d: %d ops, %d unknown, %d fenced writes, %d lost locks", seed, len(h.Ops), unknowns, fenced, lost)
		}
	}
}

func TestGenerateIsDeterministic(t *testing.T) {
	a, b := synth.Generate(42, 3000, 4, 12), synth.Generate(42, 3000, 4, 12)
	if !reflect.DeepEqual(a, b) {
		t.Fatal("same seed, different histories")
	}
	if c := synth.Generate(43, 3000, 4, 12); reflect.DeepEqual(a.Ops, c.Ops) {
		t.Fatal("different seeds, same history")
	}
}
