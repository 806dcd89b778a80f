package checker

import (
	"testing"

	"github.com/lockcheck/lockcheck/history"
)

// renewing is a history of a client that keeps its lease alive on its
// own (Meta.Renews): its lock calls carry no lease.
func renewing(ops ...history.Op) *history.History {
	h := hist(ops...)
	h.Meta.Renews = true
	return h
}

// TestRenewingClientHolds: a self-renewing client's key lives until a
// release, its holder's or one its library ran aside (recorded under a
// client id of its own), however long after the TTL; without that
// release another's OK is a violation; and its leaseless lock calls are
// no sign of a key without expiry, as they are for any other client.
func TestRenewingClientHolds(t *testing.T) {
	held := []history.Op{
		ttl(acq(1, "a1", ok, 0, 1), 0),
		acq(2, "b1", fail, 1500, 1501), // past the TTL asked for: still renewed
	}
	lapse := client(rel(1, "a1", ok, 2000, 2010), 9)
	taken := acq(2, "b2", ok, 2020, 2021)
	for _, c := range []checkCase{
		{name: "held past its TTL until the library's release", h: renewing(append(held, lapse, taken)...), verdict: Safe},
		{name: "taken with no release", h: renewing(append(held, taken)...), verdict: Violated,
			want: map[string]Status{Linearizability: Fail}},
		{name: "a leaseless acquire of a client that does not renew", h: hist(append(held, lapse, taken)...), verdict: Violated,
			want: map[string]Status{TTL: Fail}},
	} {
		t.Run(c.name, func(t *testing.T) { runCase(t, c) })
	}
}
