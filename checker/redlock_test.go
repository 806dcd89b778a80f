package checker

import (
	"context"
	"slices"
	"testing"

	"github.com/lockcheck/lockcheck/history"
)

// A Redlock history (meta topology redlock) is judged by the majority
// rules: an OK acquire or extend returned after the lease it asked for is
// a late grant, the lock is no one register (linearizability skipped),
// and a refusal is no sign the key is held (contenders that split the
// nodes are all refused), so no key is judged stuck. The same history on
// one server is judged as before.
func TestRedlockRules(t *testing.T) {
	for _, tc := range []struct {
		name     string
		redlock  bool
		ops      []history.Op
		wantTTL  Status
		wantKind FindingKind
	}{
		{name: "a grant in time", redlock: true, wantTTL: Pass,
			ops: []history.Op{acq(1, "a1", ok, 0, 400), rel(1, "a1", ok, 500, 501)}},
		{name: "a grant after its lease", redlock: true, wantTTL: Fail, wantKind: KindLateGrant,
			ops: []history.Op{acq(1, "a1", ok, 0, 1500), rel(1, "a1", ok, 1600, 1601)}},
		{name: "an extend after its lease", redlock: true, wantTTL: Fail, wantKind: KindLateGrant,
			ops: []history.Op{acq(1, "a1", ok, 0, 1), ext(1, "a1", ok, 500, 1700), rel(1, "a1", ok, 1800, 1801)}},
		{name: "a late grant on one server is not judged", redlock: false, wantTTL: Pass,
			ops: []history.Op{acq(1, "a1", ok, 0, 1500), rel(1, "a1", ok, 1600, 1601)}},
		{name: "refused after the lease: contenders split the nodes, no stuck key", redlock: true, wantTTL: Pass,
			ops: []history.Op{acq(1, "a1", ok, 0, 1), rel(1, "a1", ok, 100, 101), acq(2, "", fail, 200, 201), acq(3, "", fail, 1150, 1151)}},
		{name: "refused long after every lease on one server", redlock: false, wantTTL: Fail, wantKind: KindStuck,
			ops: []history.Op{acq(1, "a1", ok, 0, 1), rel(1, "a1", ok, 100, 101), acq(2, "", fail, 200, 201), acq(3, "", fail, 1150, 1151)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := hist(tc.ops...)
			if tc.redlock {
				h.Meta.Topology = "redlock"
			}
			opts := OptionsFor(h)
			if opts.Majority != tc.redlock || slices.Contains(opts.Skip, Linearizability) != tc.redlock {
				t.Fatalf("options %+v: majority and the skipped linearizability check should follow the topology", opts)
			}
			r, err := Run(context.Background(), h, opts)
			if err != nil {
				t.Fatal(err)
			}
			c, _ := r.Check(TTL)
			if c.Status != tc.wantTTL {
				t.Fatalf("ttl %s (%s), want %s", c.Status, c.Summary, tc.wantTTL)
			}
			if tc.wantKind != "" && (len(c.Findings) == 0 || c.Findings[0].Kind != tc.wantKind) {
				t.Fatalf("findings %+v, want %s", c.Findings, tc.wantKind)
			}
			if l, _ := r.Check(Linearizability); tc.redlock && l.Status != Skipped {
				t.Fatalf("linearizability %s on a Redlock history, want skipped", l.Status)
			}
		})
	}
}
