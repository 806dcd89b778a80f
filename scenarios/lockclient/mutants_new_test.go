package lockclient

import (
	"context"
	"testing"
	"time"

	"github.com/lockcheck/lockcheck/history"
)

// TestTwoCommandMutants freezes each two-command mutant between its
// commands (its MidOp hook) and shows what the pause does on a real server.
func TestTwoCommandMutants(t *testing.T) {
	topo := sharedStandalone(t, "valkey-9.1")
	raw := direct(t, topo)
	cfg := ConfigFor(topo)
	ctx := context.Background()
	const key = "lock:{m2}"
	ttl := 200 * time.Millisecond
	frozen := func() (Config, chan struct{}, chan struct{}) {
		c := cfg
		paused, resume := make(chan struct{}), make(chan struct{})
		c.MidOp = func(context.Context, string) { close(paused); <-resume }
		return c, paused, resume
	}

	t.Run("SET NX then PEXPIRE leaves a key without expiry in between", func(t *testing.T) {
		flushAll(t, raw)
		c, paused, resume := frozen()
		m := newTestClient(t, "mutant-setnx-expire", c)
		done := make(chan Result)
		go func() { done <- m.Acquire(ctx, key, ttl) }()
		<-paused
		if p := pttl(t, raw, key); p != -1 {
			t.Fatalf("PTTL %d between SET NX and PEXPIRE, the bug leaves -1", p)
		}
		close(resume)
		if r := <-done; r.Outcome != history.OK {
			t.Fatalf("acquire: %+v", r)
		}
		if p := pttl(t, raw, key); p <= 0 || p > ttl.Milliseconds() {
			t.Fatalf("PTTL %d after the PEXPIRE, want 1..%d", p, ttl.Milliseconds())
		}
	})

	t.Run("GET then DEL deletes the lock taken in between", func(t *testing.T) {
		flushAll(t, raw)
		c, paused, resume := frozen()
		m, next := newTestClient(t, "mutant-release-get-del", c), newTestClient(t, "native", cfg)
		a := m.Acquire(ctx, key, time.Second) // long enough that the GET surely finds it
		done := make(chan Result)
		go func() { done <- m.Release(ctx, key, a.Token) }()
		<-paused // GET found its token
		awaitGone(t, raw, key)
		b := next.Acquire(ctx, key, 5*time.Second)
		close(resume)
		if r := <-done; a.Outcome != history.OK || b.Outcome != history.OK || r.Outcome != history.OK {
			t.Fatalf("acquire %+v, next acquire %+v, release %+v", a, b, r)
		}
		if _, held := get(t, raw, key); held {
			t.Fatal("the next holder's lock survived the stale DEL")
		}
	})
}

// TestStaleExtendMutants: after the first holder's lease ended and the
// next client took the key, each of these mutants' extend says OK.
func TestStaleExtendMutants(t *testing.T) {
	topo := sharedStandalone(t, "valkey-9.1")
	raw := direct(t, topo)
	cfg := ConfigFor(topo)
	ctx := context.Background()
	const key = "lock:{m3}"
	ttl := 200 * time.Millisecond
	for _, kind := range []string{"mutant-extend-blind", "mutant-extend-ignores-reply", "mutant-shared-token", "native"} {
		t.Run(kind, func(t *testing.T) {
			flushAll(t, raw)
			stale, next := newTestClient(t, kind, cfg), newTestClient(t, kind, cfg)
			a := stale.Acquire(ctx, key, ttl)
			awaitGone(t, raw, key)
			b := next.Acquire(ctx, key, 5*time.Second)
			if a.Outcome != history.OK || b.Outcome != history.OK {
				t.Fatalf("acquires: %+v, %+v", a, b)
			}
			if kind == "mutant-shared-token" && a.Token != b.Token {
				t.Fatalf("tokens %q and %q: the bug shares one", a.Token, b.Token)
			}
			e := stale.Extend(ctx, key, a.Token, 10*time.Second)
			want := history.OK
			if kind == "native" {
				want = history.Fail
			}
			if e.Outcome != want {
				t.Fatalf("the stale holder's extend: %+v, want %s", e, want)
			}
			v, held := get(t, raw, key)
			if !held || v != b.Token {
				t.Fatalf("the key holds %q (held %v), want the next holder's %q", v, held, b.Token)
			}
			if p := pttl(t, raw, key); kind == "mutant-extend-blind" && p <= 5000 {
				t.Fatalf("PTTL %d: the blind PEXPIRE moves the next holder's deadline to 10 s", p)
			}
		})
	}
}
