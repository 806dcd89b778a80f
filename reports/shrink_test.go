package reports

import (
	"strings"
	"testing"
)

// TestShrinkMarkdown: a row per shrink, the ratio of operations, and a
// shrink that kept nothing said so rather than shown as 0 operations.
func TestShrinkMarkdown(t *testing.T) {
	rows := []Shrunk{
		{From: "runs/a", Kind: "double_holder", Before: Size{Clients: 6, Keys: 1, Ops: 120, FaultSteps: 1, Seconds: 12}, After: Size{Clients: 2, Keys: 1, Ops: 12, FaultSteps: 1, Seconds: 4},
			Reproduced: 10, Runs: 10, Confirmed: true, Command: "lockcheck run --clients=2", Budget: "10m0s", Seconds: 412, Ended: "budget"},
		{From: "runs/b", Kind: "ttl", Before: Size{Ops: 50}, Budget: "10m0s", Ended: "interrupted"},
	}
	md := ShrinkMarkdown(rows)
	for _, want := range []string{"| a | double_holder | 6, 1, 120, 1, 12.0 | 2, 1, 12, 1, 4.0 | 10.0x | 10 of 10 | 412 s of 10m0s | budget |", "| b | ttl |", "none kept"} {
		if !strings.Contains(md, want) {
			t.Errorf("table lacks %q:\n%s", want, md)
		}
	}
	if got := strings.Count(md, "\n"); got != 4 {
		t.Errorf("%d lines, want a header, its rule and 2 rows:\n%s", got, md)
	}
}
