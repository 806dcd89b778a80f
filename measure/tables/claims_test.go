package tables

import (
	"strings"
	"testing"

	"github.com/lockcheck/lockcheck/history"
	"github.com/lockcheck/lockcheck/measure"
	"github.com/lockcheck/lockcheck/reports"
	"github.com/lockcheck/lockcheck/scenarios"
	"github.com/lockcheck/lockcheck/topology"
)

// The mitigations' cost counts acquires that took the lock, those refused
// with an error reply (NOREPLICAS, or the failover's READONLY), and those
// given back at the instant they returned (a short WAIT's release); a
// release later in the hold is no give-back, and a refusal without an
// error (contention) is no cost.
func TestAcquireCosts(t *testing.T) {
	op := func(w int, kind history.Kind, tok string, out history.Outcome, errText string, call, ret int64) history.Op {
		return history.Op{Worker: w, Client: w, Key: "k", Kind: kind, Token: tok, Outcome: out, Error: errText, Call: call, Return: ret}
	}
	h := &history.History{Ops: []history.Op{
		op(1, history.Acquire, "a", history.OK, "", 0, 5),
		op(1, history.Release, "a", history.OK, "", 5, 7),  // given back
		op(2, history.Acquire, "", history.Fail, "", 6, 8), // contention
		op(2, history.Acquire, "", history.Fail, "NOREPLICAS Not enough good replicas to write.", 9, 10),
		op(4, history.Acquire, "", history.Fail, "READONLY You can't write against a read only replica.", 9, 10),
		op(3, history.Acquire, "b", history.OK, "", 11, 12),
		op(3, history.Release, "b", history.OK, "", 50, 51), // a hold's end
	}}
	took, refused, back := acquireCosts(h)
	if took != 2 || refused != 2 || back != 1 {
		t.Fatalf("took %d, refused %d, given back %d; want 2, 2, 1", took, refused, back)
	}
}

// TestCardRowsKeepTheirNotice: the report card lists how each library
// tells its holder of a loss; the rows the runs are tallied into keep
// that note, or the card's list comes out empty.
func TestCardRowsKeepTheirNotice(t *testing.T) {
	c := Claims{Table: reports.TableReportCard, Build: topology.Build{Name: "valkey-9.1"}, Claims: scenarios.ReportCardClaims()[:1], Runs: 1}
	rows, mutants, _ := c.rows()
	_, out, _ := tallyClaims(rows, mutants, nil)
	var page strings.Builder
	reports.ClaimsPage(&page, &reports.Claims{Table: reports.TableReportCard, Server: "valkey-9.1", Runs: 1, Rows: out})
	for _, r := range out {
		if r.Notice == "" && r.Client != "native" && r.Client != "fenced" {
			t.Errorf("row %s / %s lost its notice", r.Claim, r.Client)
		}
	}
	if !strings.Contains(page.String(), "- redsync: Mutex.ExtendContext returns false") {
		t.Errorf("the card does not list redsync's notice:\n%s", page.String())
	}
}

// TestClaimsResumeKeepsEarlierRuns: a shard's earlier runs are taken as
// measured (those that ended in an error are made again), and an earlier
// table of other flags is refused.
func TestClaimsResumeKeepsEarlierRuns(t *testing.T) {
	shard := measure.Shard{I: 2, N: 8}
	c := Claims{Table: reports.TableReportCard, Build: topology.Build{Name: "valkey-9.1"}, Claims: scenarios.ReportCardClaims(), Runs: 20, Shard: shard}
	_, _, plan := c.rows()
	var mine []claimJob
	for i, j := range plan.Items {
		if shard.Mine(i) {
			mine = append(mine, j)
		}
	}
	measured, failed := mine[0], mine[1]
	c.Earlier = &reports.Claims{Table: c.Table, Server: "valkey-9.1", Runs: 20, Part: measure.Part{Shard: 2, Shards: 8},
		Rows: []reports.ClaimRow{{Claim: measured.claim, Client: measured.client, Details: []reports.ClaimRun{
			{Claim: measured.claim, Client: measured.client, Seed: measured.s.Seed},
			{Claim: failed.claim, Client: failed.client, Seed: failed.s.Seed, Error: "start the topology: no Docker"},
		}}}}
	if err := c.CheckEarlier(); err != nil {
		t.Fatal(err)
	}
	done, _, err := c.done(plan)
	if err != nil || done.Len() != 1 {
		t.Fatalf("done %d, err %v; want the one run without an error", done.Len(), err)
	}
	other := c
	other.Runs = 10
	if err := other.CheckEarlier(); err == nil || !strings.Contains(err.Error(), "the same --table, --runs") {
		t.Fatalf("an earlier table of 20 seeds resumed with 10: %v", err)
	}
}

// TestFalseAlarmsResumeRemakesShortRows: an earlier false-alarms row with
// every seed is kept; one cut short by the interruption is made again.
func TestFalseAlarmsResumeRemakesShortRows(t *testing.T) {
	b := topology.Build{Name: "valkey-9.1"}
	f := FalseAlarms{Cases: []AlarmCase{{Client: "native", Build: b}, {Client: "fenced", Build: b}}, Topologies: []topology.Kind{topology.Standalone}, Runs: 20}
	duration := reports.MillisOf(f.Scenario(&topology.Topology{}, "", 0).Duration)
	f.Earlier = &reports.FalseAlarms{Runs: 20, Duration: duration, Rows: []reports.AlarmRow{
		{Client: "native", Server: "valkey-9.1", Topology: "standalone", Runs: 20},
		{Client: "fenced", Server: "valkey-9.1", Topology: "standalone", Runs: 7},
	}}
	done, _, err := f.done()
	if err != nil || done.Len() != 1 {
		t.Fatalf("done %d, err %v; want native's whole row alone", done.Len(), err)
	}
	f.Earlier.Rows = append(f.Earlier.Rows, reports.AlarmRow{Client: "lua", Server: "valkey-9.1", Topology: "standalone", Runs: 20})
	if err := f.CheckEarlier(); err == nil || !strings.Contains(err.Error(), "lua on valkey-9.1 standalone") {
		t.Fatalf("a row of a client not measured now was resumed: %v", err)
	}
}
