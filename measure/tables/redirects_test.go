package tables

import (
	"testing"

	"github.com/lockcheck/lockcheck/history"
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
