package lockclient

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/valkey-io/valkey-go"

	"github.com/lockcheck/lockcheck/history"
)

// clientCase says what to expect from a kind beyond the common contract.
type clientCase struct {
	kind string
	// storesToken: the token is the value in the lock key.
	storesToken bool
	// key is where the kind keeps the lock (valkeylock adds a prefix).
	key func(name string) string
	// stealsOnRelease: releasing with a foreign token deletes anyway.
	stealsOnRelease bool
	// resurrects: an extend after the release takes the lock again.
	resurrects bool
	// ttlAfterExtend: "px" (moved), "none" (PTTL -1) or "keep" (old deadline).
	ttlAfterExtend string
	// extendIsLocal: extend asks the library, not the server.
	extendIsLocal bool
}

func clientCases(t *testing.T) []clientCase {
	same := func(n string) string { return n }
	cases := []clientCase{
		{kind: "native", storesToken: true, key: same, ttlAfterExtend: "px"},
		{kind: "fenced", storesToken: true, key: same, ttlAfterExtend: "px"},
		{kind: "lua", storesToken: true, key: same, ttlAfterExtend: "px"},
		{kind: "mutant-del", storesToken: true, key: same, ttlAfterExtend: "px", stealsOnRelease: true},
		{kind: "mutant-extend-nopx", storesToken: true, key: same, ttlAfterExtend: "none"},
		{kind: "mutant-extend-keepttl", storesToken: true, key: same, ttlAfterExtend: "keep"},
		{kind: "mutant-fence-outside", storesToken: true, key: same, ttlAfterExtend: "px"},
		{kind: "mutant-reacquire", storesToken: true, key: same, ttlAfterExtend: "px", resurrects: true},
		{kind: "redsync", storesToken: true, key: same, ttlAfterExtend: "px"},
		{kind: "redislock", storesToken: true, key: same, ttlAfterExtend: "px"},
		{kind: "valkeylock", key: func(n string) string { return "valkeylock:0:" + n }, ttlAfterExtend: "px", extendIsLocal: true},
		{kind: "glide", storesToken: true, key: same, ttlAfterExtend: "px"},
		{kind: pythonAdapter(t), storesToken: true, key: same, ttlAfterExtend: "px"},
	}
	return cases
}

// TestClientCommands runs every client's acquire, extend and release
// against a real valkey-9.1 and looks at the key behind its back.
func TestClientCommands(t *testing.T) {
	topo := sharedStandalone(t, "valkey-9.1")
	raw := direct(t, topo)
	cfg := ConfigFor(topo)
	for _, cc := range clientCases(t) {
		name := cc.kind
		if strings.HasPrefix(name, ExternalPrefix) {
			name = "external-python"
		}
		t.Run(name, func(t *testing.T) {
			flushAll(t, raw)
			testClientContract(t, cc, cfg, raw)
		})
	}
}

func testClientContract(t *testing.T, cc clientCase, cfg Config, rc valkey.Client) {
	ctx := context.Background()
	a, b := newTestClient(t, cc.kind, cfg), newTestClient(t, cc.kind, cfg)
	key := "lock:{" + t.Name() + "}" // one key per test: no flush needed between them
	lockKey := cc.key(key)
	expect := func(what string, r Result, want history.Outcome) {
		t.Helper()
		if r.Outcome != want {
			t.Fatalf("%s: %s (%q), want %s", what, r.Outcome, r.Err, want)
		}
	}
	// Leases are long next to the steps between them, so that no step
	// outlives one on a slow machine; PTTL bounds only move the easy way
	// when time passes.
	ra := a.Acquire(ctx, key, 10*time.Second)
	expect("A acquires", ra, history.OK)
	if ra.Token == "" {
		t.Fatal("acquire returned no token")
	}
	if v, ok := get(t, rc, lockKey); !ok || (cc.storesToken && v != ra.Token) {
		t.Fatalf("lock key %s holds %q (present %v), want the token %q", lockKey, v, ok, ra.Token)
	}
	if p := pttl(t, rc, lockKey); p <= 0 || p > 10000 {
		t.Fatalf("PTTL %d after acquire with TTL 10000", p)
	}
	expect("B acquires the held lock", b.Acquire(ctx, key, 10*time.Second), history.Fail)

	time.Sleep(300 * time.Millisecond)
	expect("A extends", a.Extend(ctx, key, ra.Token, 20*time.Second), history.OK)
	p := pttl(t, rc, lockKey)
	switch {
	case cc.extendIsLocal:
		// The library extends on its own schedule; the key must live.
		if p <= 0 {
			t.Fatalf("PTTL %d while valkeylock holds the lock", p)
		}
	case cc.ttlAfterExtend == "px" && (p <= 10000 || p > 20000):
		t.Fatalf("PTTL %d after extending to 20000, more than 300 ms into a 10000 lease", p)
	case cc.ttlAfterExtend == "none" && p != -1:
		t.Fatalf("PTTL %d after an extend without PX, the bug leaves -1", p)
	case cc.ttlAfterExtend == "keep" && p > 9800:
		t.Fatalf("PTTL %d after a KEEPTTL extend, the bug keeps the old deadline (< 9700)", p)
	}
	if !cc.extendIsLocal {
		expect("B extends with a foreign token", b.Extend(ctx, key, "not-the-token", time.Second), history.Fail)
	}
	rel := b.Release(ctx, key, "not-the-token")
	if cc.stealsOnRelease {
		expect("B's plain DEL with a foreign token", rel, history.OK)
		if _, ok := get(t, rc, lockKey); ok {
			t.Fatal("plain DEL left the key")
		}
		return
	}
	expect("B releases with a foreign token", rel, history.Fail)
	if _, ok := get(t, rc, lockKey); !ok {
		t.Fatal("a foreign release removed the lock")
	}
	expect("A releases", a.Release(ctx, key, ra.Token), history.OK)
	if _, ok := get(t, rc, lockKey); ok {
		t.Fatal("the lock key outlived its release")
	}
	expect("A releases again", a.Release(ctx, key, ra.Token), history.Fail)
	if cc.resurrects {
		expect("the reacquiring mutant extends a released lock", a.Extend(ctx, key, ra.Token, time.Second), history.OK)
		return
	}
	if !cc.extendIsLocal {
		expect("A extends a released lock", a.Extend(ctx, key, ra.Token, time.Second), history.Fail)
	}
	rb := b.Acquire(ctx, key, time.Second)
	expect("B acquires after the release", rb, history.OK)
	if ra.HasFence != rb.HasFence || (ra.HasFence && rb.Fence <= ra.Fence) {
		t.Fatalf("fences %d (%v) then %d (%v): want rising fences, or none", ra.Fence, ra.HasFence, rb.Fence, rb.HasFence)
	}
}
