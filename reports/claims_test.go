package reports

import (
	"strings"
	"testing"
)

// A claim's row counts its runs and says whether they showed what the
// claim expects; the tables name every row's command.
func TestClaimRows(t *testing.T) {
	runs := []ClaimRun{
		{Seed: 1, Verdict: "safe", GateMet: true, Acquires: 10},
		{Seed: 2, Verdict: "violated", DoubleHolders: 2, FirstDouble: 4000, Overlap: 300, Acquires: 8, GivenBack: 2},
		{Seed: 3, Verdict: "violated", GateMet: true, LostIncrements: 1, Refused: 5},
		{Seed: 4, Error: "topology did not start"},
	}
	r := ClaimRow{Claim: "sentinel/wait", Topology: "sentinel", Client: "native", Command: "lockcheck run --topology=sentinel"}
	for _, run := range runs {
		r.Add(run)
	}
	if r.Runs != 3 || r.Errors != 1 || r.Safe != 1 || r.GateMet != 2 || r.DoubleHolder != 1 || r.StaleReached != 1 {
		t.Fatalf("row %+v", r)
	}
	if r.Acquires != 18 || r.Refused != 5 || r.GivenBack != 2 || len(r.FirstDoubleMs) != 1 || r.OverlapMs[0] != 300 {
		t.Fatalf("costs and windows %+v", r)
	}
	for expect, want := range map[string]bool{
		"safe": false, "lock-correct": false, "double holders": true,
		"stale writes reach the resource": true, "stale writes stopped by the fence": false,
	} {
		r.Expect = expect
		if got := r.AsExpected(); got != want {
			t.Errorf("expect %q: as expected %v, want %v", expect, got, want)
		}
	}
	var md strings.Builder
	ClaimsPage(&md, &Claims{Table: TableMitigations, Runs: 4, Rows: []ClaimRow{r}})
	for _, want := range []string{"| sentinel | wait | native | 3 (1 failed to run) | 1 of 3 (33 %) | 4.0 s | 300 ms | 1 | 30.4 % (5 refused, 2 given back, of 23) |", "`lockcheck run --topology=sentinel`"} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("mitigations table lacks %q:\n%s", want, md.String())
		}
	}
}
