package scenarios

import (
	"path/filepath"
	"reflect"
	"testing"

	"github.com/lockcheck/lockcheck/history"
	"github.com/lockcheck/lockcheck/history/historyjson"
)

// roundTrip saves h, loads it back and fails unless the two are equal.
func roundTrip(t *testing.T, h *history.History) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "history.json")
	if err := h.Save(path); err != nil {
		t.Fatal(err)
	}
	back, err := historyjson.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(h, back) {
		t.Fatalf("history changed on the way through JSON:\nsaved  %+v\nloaded %+v", h, back)
	}
}

// TestHistoryRoundTrip covers the fields whose zero values JSON omits
// (fence 0 with HasFence, Read 0) and every kind and outcome.
func TestHistoryRoundTrip(t *testing.T) {
	rec := history.NewRecorder()
	c := rec.NewClient()
	rec.Add(history.Op{Client: c, Worker: 0, Key: "lock:{k1}", Kind: history.Acquire, Token: "ab", TTLms: 300, Fence: 0, HasFence: true, Outcome: history.OK, Call: 1, Return: 2})
	rec.Add(history.Op{Client: c, Worker: 0, Key: "lock:{k1}", Kind: history.Write, Token: "ab", Fence: 0, HasFence: true, Outcome: history.OK, Call: 3, Return: 4})
	rec.Add(history.Op{Client: c, Worker: 0, Key: "lock:{k1}", Kind: history.Write, Read: 0, Wrote: 1, Outcome: history.OK, Call: 5, Return: 6})
	rec.Add(history.Op{Client: c, Worker: 0, Key: "lock:{k1}", Kind: history.Extend, Token: "ab", TTLms: 300, Outcome: history.Unknown, Error: "no reply within 1s", Call: 7, Return: 8})
	rec.Add(history.Op{Client: rec.NewClient(), Worker: 0, Key: "lock:{k1}", Kind: history.Release, Token: "ab", Outcome: history.Fail, Error: "ERR unknown command 'DELIFEQ'", Call: 9, Return: 10})
	i := rec.FaultStart("pause", "n1", "SIGSTOP")
	rec.FaultEnd(i)
	rec.FaultStart("kill", "n0", "")
	h := rec.History(history.Meta{Server: "valkey-9.1", Version: "9.1.2", Topology: "standalone", Client: "fenced",
		Seed: -7, TTLms: 300, Clients: 2, Keys: 1, Fenced: true, Faults: []string{"pause", "kill"}})
	roundTrip(t, h)
	roundTrip(t, &history.History{})
}
