package tables

import (
	"testing"

	"github.com/lockcheck/lockcheck/history"
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
