package reports

import (
	"strings"
	"testing"
	"time"
)

// TestShrinkMarkdown: a row per shrink, the ratio of operations, the
// reproducer's form (a scenario, or a script of so many steps), and a
// shrink that kept nothing said so rather than shown as 0 operations.
func TestShrinkMarkdown(t *testing.T) {
	rows := []Shrunk{
		{From: "runs/a", Kind: "double_holder", Before: Size{Clients: 6, Keys: 1, Ops: 120, FaultSteps: 1, Seconds: 12}, After: Size{Clients: 2, Keys: 1, Ops: 12, FaultSteps: 1, Seconds: 4},
			Reproduced: 10, Runs: 10, Confirmed: true, Command: "lockcheck run --clients=2", Budget: "10m0s", Seconds: 412, Ended: "budget"},
		{From: "runs/b", Kind: "ttl", Before: Size{Ops: 50}, Budget: "10m0s", Ended: "interrupted"},
		{From: "runs/c", Kind: "double_holder", Before: Size{Clients: 4, Keys: 1, Ops: 111, Seconds: 4}, After: Size{Clients: 2, Keys: 1, Ops: 4, Seconds: 1.5},
			Reproduced: 10, Runs: 10, Confirmed: true, Command: "lockcheck replay c-shrunk", Script: []string{"1.", "2.", "3.", "4."}, Budget: "10m0s", Seconds: 70, Ended: "no step of the script left to cut"},
	}
	md := ShrinkMarkdown(rows)
	for _, want := range []string{"| a | double_holder | 6, 1, 120, 1, 12.0 | 2, 1, 12, 1, 4.0 | scenario | 10.0x | 10 of 10 | 412 s of 10m0s | budget |", "| b | ttl |", "none kept",
		"| c | double_holder | 4, 1, 111, 0, 4.0 | 2, 1, 4, 0, 1.5 | script of 4 steps | 27.8x | 10 of 10 |"} {
		if !strings.Contains(md, want) {
			t.Errorf("table lacks %q:\n%s", want, md)
		}
	}
	if got := strings.Count(md, "\n"); got != 5 {
		t.Errorf("%d lines, want a header, its rule and 3 rows:\n%s", got, md)
	}
}

// TestShrinkBlock: the block make shrink-figures writes into the pages
// says when and where the shrinks ran, then holds the table, and splices
// into a page between its markers.
func TestShrinkBlock(t *testing.T) {
	rows := []Shrunk{
		{From: "runs/a", Kind: "double_holder", Before: Size{Ops: 50}, Budget: "10m0s"},
		{From: "runs/b", Kind: "double_holder", Before: Size{Ops: 60}, Budget: "10m0s", Started: time.Date(2026, 12, 3, 13, 5, 0, 0, time.UTC), Machine: "2 CPUs, load average 1.5 at the start, 3.0 at the end"},
	}
	bl := ShrinkBlock(rows)
	if bl.Name != "make shrink-figures" || !strings.HasPrefix(bl.Text, "Measured 2026-12-03 13:05 UTC (2 CPUs, load average 1.5 at the start, 3.0 at the end), 2 shrinks.\n\n| run |") {
		t.Fatalf("block %q:\n%s", bl.Name, bl.Text)
	}
	page := "# page\n" + BeginMarker(bl.Name) + "\nold table\n" + EndMarker(bl.Name) + "\nafter\n"
	out, err := Splice([]byte(page), bl.Name, bl.Text)
	if err != nil {
		t.Fatal(err)
	}
	if got := string(out); strings.Contains(got, "old table") || !strings.Contains(got, "| b | double_holder |") || !strings.HasSuffix(got, EndMarker(bl.Name)+"\nafter\n") {
		t.Errorf("spliced page:\n%s", got)
	}
}
