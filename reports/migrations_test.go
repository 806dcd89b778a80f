package reports

import (
	"strings"
	"testing"
)

// The migrations table is a grid of clients by faults: a fault's fenced
// variant shares its column, a cell not measured is "-", a cell short
// of lock-correct is bold, a measured-only cell is marked and not
// judged, and the headline names what fell short.
func TestMigrationsTable(t *testing.T) {
	row := func(claim, client, expect string, runs ...ClaimRun) ClaimRow {
		r := ClaimRow{Claim: claim, Client: client, Expect: expect, Command: "lockcheck run --fault=" + claim}
		for _, run := range runs {
			r.Add(run)
		}
		return r
	}
	met := ClaimRun{Verdict: "safe", GateMet: true}
	c := &Claims{Table: TableMigrations, Server: "valkey-9.1", Runs: 2, Complete: true, Rows: []ClaimRow{
		row("migrate-slot", "native", "lock-correct", met, met),
		row("migrate-slot", "redsync", "lock-correct", met, ClaimRun{Verdict: "violated", DoubleHolders: 1, Redirects: 3}),
		row("migrate-and-failover", "native", "measured", met, ClaimRun{Verdict: "violated", DoubleHolders: 2}),
		row("migrate-and-failover/fenced", "fenced", "lock-correct", met, ClaimRun{Verdict: "unknown", Class: "not-reproduced", NotReproduced: true}),
	}}
	var md strings.Builder
	ClaimsPage(&md, c)
	for _, want := range []string{
		"| client | migrate-slot | migrate-and-failover |",
		"| native | 2/2 | 1/2 (1 double) *measured* |",
		"| redsync | **1/2 (1 double, 3 redirects surfaced)** | - |",
		"| fenced | - | **1/2 (1 not reproduced)** |",
		"`lockcheck run --fault=migrate-slot`",
	} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("migrations table lacks %q:\n%s", want, md.String())
		}
	}
	head := claimsHeadline(c)
	for _, want := range []string{"1 of 3 client and fault cells", "redsync under migrate-slot 1/2", "fenced under migrate-and-failover/fenced 1/2"} {
		if !strings.Contains(head, want) {
			t.Errorf("headline lacks %q: %s", want, head)
		}
	}
}
