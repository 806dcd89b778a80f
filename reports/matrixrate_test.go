package reports

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lockcheck/lockcheck/checker"
	"github.com/lockcheck/lockcheck/history"
)

// TestMatrixRate: two matrices of one cell each, the first as expected
// and the second not, give one row of 1 of 2 as expected, the median time
// from the fault's start to the double holder, the runs' median length,
// and a line naming the run that was not as expected.
func TestMatrixRate(t *testing.T) {
	var idxs []*Index
	var dirs []string
	for i, outcome := range []CellOutcome{CellViolated, CellNotReproduced} {
		dir := t.TempDir()
		cell := IndexCell{Server: "valkey-9.1", Topology: "sentinel", Client: "native", Fault: "kill-primary", Expected: CellViolated,
			Outcome: outcome, Verdict: checker.Violated, Seed: int64(i + 1), Dir: "run", Reason: "why not"}
		rr := RunResult{Verdict: checker.Violated, DurationMs: int64(20000 + 10000*i),
			Injected: []history.Fault{{Name: "kill-primary", Start: 1e9}}}
		if outcome == CellViolated {
			rr.Checks = checker.Checks{{Name: checker.DoubleHolder, Status: checker.Fail, Count: 1,
				Findings: []checker.Finding{{Kind: checker.KindDoubleHolder, Start: 4e9}}}}
		}
		if err := os.MkdirAll(filepath.Join(dir, "run"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := rr.Save(filepath.Join(dir, "run", "result.json")); err != nil {
			t.Fatal(err)
		}
		idxs, dirs = append(idxs, &Index{Cells: []IndexCell{cell}}), append(dirs, dir)
	}
	rows := MatrixRate(idxs, dirs)
	if len(rows) != 1 || rows[0].Runs != 2 || rows[0].AsExpected != 1 {
		t.Fatalf("rows %+v", rows)
	}
	md := RateMarkdown(rows)
	for _, want := range []string{"| sentinel | native | kill-primary | VIOLATED | 2 | 1 of 2 | 3.0 s | 25.0 s |", "not as expected: sentinel native under kill-primary, seed 2: not reproduced: why not"} {
		if !strings.Contains(md, want) {
			t.Fatalf("table lacks %q:\n%s", want, md)
		}
	}
	if h := RateHeadline(rows); !strings.Contains(h, "1 of 2 runs as expected; 0 of 1 cells") {
		t.Fatalf("headline %q", h)
	}
}
