package reports

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lockcheck/lockcheck/history"
)

// lostHolds: worker 1 freezes past its lease and its extend returns nil
// 500 ms after the lease ended; worker 2's lease runs out and it is never
// told; worker 3 releases cleanly.
func lostHolds() *history.History {
	h := &history.History{
		Meta: history.Meta{Server: "valkey-9.1", Topology: "standalone", Client: "native", TTLms: 1000},
		Ops: []history.Op{
			op(1, "lock:{k1}", history.Acquire, "a1", history.OK, 0, 1),
			op(1, "lock:{k1}", history.Extend, "a1", history.Fail, 300, 1500),
			op(2, "lock:{k2}", history.Acquire, "b1", history.OK, 0, 1),
			op(3, "lock:{k1}", history.Acquire, "c1", history.OK, 1600, 1601),
			op(3, "lock:{k1}", history.Release, "c1", history.OK, 1700, 1701),
		},
	}
	h.Sort()
	h.Meta.DurationNs = 2000e6
	return h
}

// TestTimeToNoticeShown: the figure reaches result.json, the terminal's
// line and report.html, whose timeline draws the stretch from each loss
// to its notice on the holder's lane.
func TestTimeToNoticeShown(t *testing.T) {
	h := lostHolds()
	res := check(t, h)
	rr := NewRunResult(h, res, nil)
	dir := t.TempDir()
	if err := rr.Save(filepath.Join(dir, "result.json")); err != nil {
		t.Fatal(err)
	}
	back, err := LoadRunResult(filepath.Join(dir, "result.json"))
	if err != nil {
		t.Fatal(err)
	}
	if back.TimeToNotice == nil || *back.TimeToNotice != *res.TimeToNotice || res.TimeToNotice.Losses != 2 || res.TimeToNotice.MedianMs != 500 {
		t.Fatalf("result.json's time to notice %+v, the check's %+v: want 2 losses, median 500 ms", back.TimeToNotice, res.TimeToNotice)
	}
	var term bytes.Buffer
	WriteVerdict(&term, back, dir)
	if line := "time to notice: 2 losses, median 500.0 ms, worst 500.0 ms, 1 never told\n"; !strings.Contains(term.String(), line) {
		t.Errorf("the terminal lacks %q:\n%s", line, term.String())
	}
	if err := WriteReport(dir, h, res, ""); err != nil {
		t.Fatal(err)
	}
	page, err := os.ReadFile(filepath.Join(dir, "report.html"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"Time to notice, from a lost lock to its holder's first reply that said so: 2 losses",
		`<rect class="unheld" `,
		"worker 1 lost the lock at 1.000 s (its lease ran out) and was told at 1.500 s (extend returned nil): 500.0 ms believing with no lock",
		`<rect class="unheld untold" `,
		"worker 2 lost the lock at 1.000 s (its lease ran out) and was never told: the run ended at 2.000 s",
	} {
		if !strings.Contains(string(page), want) {
			t.Errorf("report.html lacks %q", want)
		}
	}
}

// TestNoTimeToNoticeInAnOldResult: a result.json written before the
// figure existed prints no line for it.
func TestNoTimeToNoticeInAnOldResult(t *testing.T) {
	rr := NewRunResult(lostHolds(), check(t, lostHolds()), nil)
	rr.TimeToNotice = nil
	var term bytes.Buffer
	WriteVerdict(&term, rr, t.TempDir())
	if strings.Contains(term.String(), "time to notice") {
		t.Errorf("a line for a figure the result lacks:\n%s", term.String())
	}
}
