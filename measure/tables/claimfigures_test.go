package tables

import (
	"testing"

	"github.com/lockcheck/lockcheck/checker"
	"github.com/lockcheck/lockcheck/history"
	"github.com/lockcheck/lockcheck/reports"
)

// A lock call whose error is a cluster's redirect or refusal counts; other
// errors, and the resource's writes, do not.
func TestRedirects(t *testing.T) {
	h := &history.History{Ops: []history.Op{
		{Kind: history.Acquire, Outcome: history.Fail, Error: "ASK 12706 172.18.0.3:6379"},
		{Kind: history.Extend, Outcome: history.Unknown, Error: "TRYAGAIN Multiple keys request during rehashing of slot"},
		{Kind: history.Release, Outcome: history.Fail, Error: "CROSSSLOT Keys in request don't hash to the same slot"},
		{Kind: history.Acquire, Outcome: history.Fail, Error: "redsync: failed to acquire lock: CLUSTERDOWN The cluster is down"},
		{Kind: history.Acquire, Outcome: history.Fail, Error: "TASK failed"},
		{Kind: history.Acquire, Outcome: history.Fail, Error: "NOSCRIPT No matching script"},
		{Kind: history.Acquire, Outcome: history.Fail, Error: "context deadline exceeded; MASKED"},
		{Kind: history.Write, Outcome: history.Fail, Error: "MOVED 1 x:1"},
		{Kind: history.Acquire, Outcome: history.OK},
	}}
	if got := redirects(h); got != 4 {
		t.Fatalf("redirects %d, want 4", got)
	}
}

// A run with a fault window that could not make its moment is not
// reproduced.
func TestUnmet(t *testing.T) {
	h := &history.History{Faults: []history.Fault{{Name: "migrate-slot"}}}
	if unmet(h) {
		t.Fatal("a window without unmet counted")
	}
	h.Faults = append(h.Faults, history.Fault{Name: "scale-out", Unmet: "add a shard failed"})
	if !unmet(h) {
		t.Fatal("an unmet window not counted")
	}
}

// The report card's figures of a run: the time to notice from the check,
// and the lock calls' errors by kind (the resource's writes aside).
func TestCardFigures(t *testing.T) {
	h := &history.History{Ops: []history.Op{
		{Kind: history.Extend, Outcome: history.Fail, Error: "NOSCRIPT No matching script. Please use EVAL."},
		{Kind: history.Release, Outcome: history.Fail, Error: "redislock: NOSCRIPT No matching script"},
		{Kind: history.Acquire, Outcome: history.Fail, Error: "ERR unknown command 'DELIFEQ'"},
		{Kind: history.Acquire, Outcome: history.Fail, Error: "ERR Could not find scripting engine 'lua'"},
		{Kind: history.Release, Outcome: history.Fail, Error: "Could not find scripting engine 'lua'"},
		{Kind: history.Acquire, Outcome: history.Unknown, Error: "no reply within 1s: context deadline exceeded"},
		{Kind: history.Acquire, Outcome: history.Fail, Error: "READONLY You can't write against a read only replica."},
		{Kind: history.Write, Outcome: history.Fail, Error: "stale fence"},
	}}
	res := &checker.Result{}
	res.TimeToNotice = &checker.NoticeSummary{Losses: 3, Told: 2, NeverTold: 1, MedianMs: 120.4, WorstMs: 900.6}
	var c reports.CardRun
	cardFigures(&c, h, res)
	want := reports.CardRun{Losses: 3, NeverTold: 1, NoticeMedian: 120, NoticeWorst: 901, NoScript: 2, NoLua: 2, UnknownCommand: 1, NoReply: 1, OtherErrors: 1}
	if c != want {
		t.Fatalf("figures %+v, want %+v", c, want)
	}
}
