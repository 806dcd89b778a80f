package reports

import (
	"strings"
	"testing"
)

// The report card shows, per topology, a row per library and fault: the
// runs that met lock-correct, double holders, the time to notice (the
// median of the runs' medians, the worst, the never told), the errors
// surfaced by kind, the worst run's history and a short cell's missed
// runs; the headline has a
// sentence per library.
func TestReportCard(t *testing.T) {
	py := "external:/usr/bin/python3 adapters/python/redis_py_adapter.py --mode lock"
	row := func(claim, client, expect string, runs ...ClaimRun) ClaimRow {
		r := ClaimRow{Claim: claim, Topology: "sentinel", Client: client, Expect: expect, Notice: "tells " + client}
		for _, run := range runs {
			r.Add(run)
		}
		return r
	}
	told := func(median, worst Millis, history string) ClaimRun {
		return ClaimRun{Verdict: "safe", GateMet: true, History: history, CardRun: CardRun{Losses: 2, NoticeMedian: median, NoticeWorst: worst}}
	}
	c := &Claims{Table: TableReportCard, Server: "valkey-9.1", Runs: 2, Complete: true, Rows: []ClaimRow{
		row("sentinel/none", "redsync", "lock-correct", told(100, 300, ""), told(200, 1500, "histories/w.json")),
		row("sentinel/script-flush", py, "lock-correct", ClaimRun{Seed: 3, Verdict: "violated", History: "histories/s.json", CardRun: CardRun{Losses: 1, NeverTold: 1, NoScript: 4, OtherErrors: 1}}, told(50, 60, "")),
		row("sentinel/kill-primary", "redsync", "measured", ClaimRun{Verdict: "violated", DoubleHolders: 1}, told(10, 20, "")),
	}}
	var md strings.Builder
	ClaimsPage(&md, c)
	for _, want := range []string{
		"| redsync | none | 2/2 | 0 | 200 ms / 1.5 s | - | [history](histories/w.json) |",
		"| redsync | kill-primary | 1/2 *measured* | 1 | 10 ms / 20 ms | - | - |",
		"- redis-py Lock: tells " + py + ".",
		"| redis-py Lock | script-flush | **1/2** | 0 | 50 ms / 60 ms, 1 of 3 never told | 4 NOSCRIPT, 1 other | -; short: [seed 3](histories/s.json) |",
	} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("report card lacks %q:\n%s", want, md.String())
		}
	}
	head := claimsHeadline(c)
	for _, want := range []string{"- redsync: lock-correct in every run in 1 of 1 judged cells; time to notice", "- redis-py Lock: lock-correct in every run in 0 of 1 judged cells (short: sentinel/script-flush 1/2)"} {
		if !strings.Contains(head, want) {
			t.Errorf("headline lacks %q:\n%s", want, head)
		}
	}
}
