package lockclient

import (
	"context"
	"testing"
	"time"

	"github.com/lockcheck/lockcheck/history"
	"github.com/lockcheck/lockcheck/topology"
)

// TestRedlockOnIndependentPrimaries runs the Redlock clients on three
// independent valkey-9.1 primaries: a hold is a majority's OK, a minority
// is refused and given back, extend and release act on every node, and
// each mutant does what its bug says (one node's OK taken for a hold; one
// value shared by every holder; a grant after its lease). redsync with one
// pool per node, and the Python adapter given every node's address, are
// held to the same majority.
func TestRedlockOnIndependentPrimaries(t *testing.T) {
	topo := startTopology(t, "valkey-9.1", topology.Redlock)
	ctx := context.Background()
	nodes := topo.Servers()
	if len(nodes) != topology.DefaultRedlockNodes {
		t.Fatalf("%d nodes, want %d", len(nodes), topology.DefaultRedlockNodes)
	}
	cfg := ConfigFor(topo)
	cfg.Timeout = 2 * time.Second
	if len(cfg.Nodes) != len(nodes) {
		t.Fatalf("config has %d node options, want %d", len(cfg.Nodes), len(nodes))
	}
	holders := func(key string) []string {
		var out []string
		for _, n := range nodes {
			v, err := n.Do(ctx, "GET", key)
			if err != nil {
				t.Fatalf("GET %s on %s: %v", key, n.Name, err)
			}
			if v == topology.Nil {
				v = ""
			}
			out = append(out, v)
		}
		return out
	}
	set := func(n *topology.Node, key, v string) {
		if _, err := n.Do(ctx, "SET", key, v, "PX", "60000"); err != nil {
			t.Fatal(err)
		}
	}
	ttl := 10 * time.Second

	cfg.StderrDir = t.TempDir()
	for _, kind := range []string{"redlock", "redsync", pythonAdapter(t)} {
		t.Run(kindLabel(kind), func(t *testing.T) {
			c := newTestClient(t, kind, cfg)
			key := "lock:{" + kindLabel(kind) + "}"
			a := c.Acquire(ctx, key, ttl)
			if a.Outcome != history.OK || a.Token == "" {
				t.Fatalf("acquire on three free nodes: %+v", a)
			}
			for i, v := range holders(key) {
				if v != a.Token {
					t.Fatalf("node %d holds %q after the acquire, want the token", i, v)
				}
			}
			if r := c.Extend(ctx, key, a.Token, ttl); r.Outcome != history.OK {
				t.Fatalf("extend: %+v", r)
			}
			if r := c.Release(ctx, key, a.Token); r.Outcome != history.OK {
				t.Fatalf("release: %+v", r)
			}
			for i, v := range holders(key) {
				if v != "" {
					t.Fatalf("node %d holds %q after the release", i, v)
				}
			}
			// two nodes taken by another: a minority is no hold, and what
			// it took is given back
			other := "lock:{" + kindLabel(kind) + "-minority}"
			set(nodes[0], other, "someone")
			set(nodes[1], other, "someone")
			if r := c.Acquire(ctx, other, ttl); r.Outcome != history.Fail {
				t.Fatalf("acquire with two of three nodes taken: %+v, want a refusal", r)
			}
			if v := holders(other)[2]; v != "" {
				t.Fatalf("n2 still holds %q after a refused acquire: not given back", v)
			}
			// one node taken: a majority is a hold
			bare := "lock:{" + kindLabel(kind) + "-bare}"
			set(nodes[2], bare, "someone")
			if r := c.Acquire(ctx, bare, ttl); r.Outcome != history.OK {
				t.Fatalf("acquire with two of three nodes free: %+v", r)
			}
		})
	}

	t.Run("mutant-redlock-any-node", func(t *testing.T) {
		c := newTestClient(t, "mutant-redlock-any-node", cfg)
		key := "lock:{any}"
		set(nodes[0], key, "someone")
		set(nodes[1], key, "someone")
		if r := c.Acquire(ctx, key, ttl); r.Outcome != history.OK {
			t.Fatalf("the mutant takes one node's OK for a hold: %+v", r)
		}
	})
	t.Run("mutant-redlock-fixed-token", func(t *testing.T) {
		a, b := newTestClient(t, "mutant-redlock-fixed-token", cfg), newTestClient(t, "mutant-redlock-fixed-token", cfg)
		key := "lock:{fixed}"
		ra := a.Acquire(ctx, key, ttl)
		rb := b.Acquire(ctx, "lock:{fixed-other}", ttl)
		if ra.Outcome != history.OK || rb.Outcome != history.OK || ra.Token != rb.Token {
			t.Fatalf("two clients' acquires: %+v and %+v, want one shared value", ra, rb)
		}
		// the other client releases the first one's lock with its value
		if r := b.Release(ctx, key, rb.Token); r.Outcome != history.OK {
			t.Fatalf("another holder's release of the shared value: %+v", r)
		}
	})
	t.Run("validity", func(t *testing.T) {
		// frozen between the nodes' answers and the validity check for
		// longer than the lease: the correct client refuses, the mutant
		// grants
		short := 300 * time.Millisecond
		for kind, want := range map[string]history.Outcome{"redlock": history.Fail, "mutant-redlock-no-validity": history.OK} {
			c := newTestClient(t, kind, cfg)
			key := "lock:{validity-" + kind + "}"
			pctx := WithPause(ctx, &Pause{For: short + 100*time.Millisecond})
			if r := c.Acquire(pctx, key, short); r.Outcome != want {
				t.Fatalf("%s frozen past its lease inside the acquire: %+v, want %s", kind, r, want)
			}
		}
	})
}
