package checker

import (
	"testing"

	"github.com/lockcheck/lockcheck/history"
)

// aside is op as its client ran it on its own (history.Op.Aside), under
// client id c: a library's background renewal or delete.
func aside(op history.Op, c int) history.Op {
	op.Aside, op.Client = true, c
	return op
}

// TestAsideCommands: what a client runs on its own (valkeylock's renewals
// and deletes) moves and ends its holder's lease, but begins no belief,
// and a delete of an old acquisition does not end the holder's next one.
func TestAsideCommands(t *testing.T) {
	for _, c := range []checkCase{
		{name: "a renewal keeps the key past the lease its holder was given", verdict: Safe, h: hist(
			ttl(acq(1, "a1", ok, 0, 1), 100), aside(ttl(ext(1, "a1", ok, 60, 61), 100), 9),
			acq(2, "b1", fail, 130, 131), // past the acquire's lease, within the renewal's
			aside(rel(1, "a1", ok, 150, 151), 10), acq(2, "b2", ok, 152, 153), rel(2, "b2", ok, 200, 201))},
		{name: "a renewal that ran as its holder released begins no belief", verdict: Safe, h: hist(
			ttl(acq(1, "a1", ok, 0, 1), 1000), rel(1, "a1", ok, 100, 110), aside(ttl(ext(1, "a1", ok, 105, 106), 1000), 9),
			acq(2, "b1", ok, 120, 121), rel(2, "b1", ok, 500, 501))},
		{name: "a lapse's delete called after its holder's next acquire does not end that hold", h: hist(
			ttl(acq(1, "a1", ok, 0, 1), 100), ttl(acq(1, "a2", ok, 104, 107), 100), aside(rel(1, "a1", ok, 105, 106), 9),
			ttl(acq(2, "b1", ok, 150, 151), 100)),
			want: map[string]Status{DoubleHolder: Fail, Linearizability: Fail}},
	} {
		if c.verdict == "" {
			c.verdict = Violated
		}
		t.Run(c.name, func(t *testing.T) { runCase(t, c) })
	}
}

// TestSpilledOpKeepsItsFlags: RunFile's spill files keep every field the
// checks read, the flags included.
func TestSpilledOpKeepsItsFlags(t *testing.T) {
	want := history.Op{Client: 3, Worker: 1, Key: "lock:{a}", Kind: history.Extend, Token: "t", TTLms: 100, Fence: 7, HasFence: true,
		Aside: true, Read: 4, Wrote: 5, Outcome: history.Unknown, Error: "late", Call: 10, Return: 20}
	var got history.Op
	rest, i, err := readOp(appendOp(nil, 42, &want), &got, nil)
	if err != nil || i != 42 || len(rest) != 0 || got != want {
		t.Fatalf("spilled and read back: %+v (index %d, %d bytes left, %v), want %+v", got, i, len(rest), err, want)
	}
}
