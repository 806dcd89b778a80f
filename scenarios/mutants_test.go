package scenarios

import (
	"context"
	"testing"
	"time"

	"github.com/lockcheck/lockcheck/history"
	"github.com/lockcheck/lockcheck/scenarios/lockclient"
)

// TestMutantBugs makes each mutant's bug happen in a targeted scenario on
// valkey-9.1, next to the correct client in the same situation, and shows
// what the history records. The checker must find these from the history
// alone, so each subtest also checks that the recorded facts give it away.
func TestMutantBugs(t *testing.T) {
	topo := sharedStandalone(t, "valkey-9.1")
	raw := direct(t, topo)
	cfg := lockclient.ConfigFor(topo)
	ctx := context.Background()
	const key = "lock:{m1}"
	ttl := 200 * time.Millisecond

	t.Run("plain DEL deletes another client's lock", func(t *testing.T) {
		flushAll(t, raw)
		stale, next, third := newTestClient(t, "mutant-del", cfg), newTestClient(t, "native", cfg), newTestClient(t, "native", cfg)
		a := stale.Acquire(ctx, key, ttl)
		time.Sleep(ttl + 100*time.Millisecond) // the stale holder's lease runs out
		b := next.Acquire(ctx, key, 5*time.Second)
		if a.Outcome != history.OK || b.Outcome != history.OK {
			t.Fatalf("acquires: %v, %v", a, b)
		}
		if r := stale.Release(ctx, key, a.Token); r.Outcome != history.OK {
			t.Fatalf("the stale DEL release: %v, want ok (the bug)", r)
		}
		if _, held := get(t, raw, key); held {
			t.Fatal("the second holder's lock survived a stale plain DEL")
		}
		if c := third.Acquire(ctx, key, time.Second); c.Outcome != history.OK {
			t.Fatalf("a third client's acquire while the second still holds: %v; the bug lets it in", c)
		}
		// The correct release refuses in the same spot.
		flushAll(t, raw)
		good := newTestClient(t, "native", cfg)
		a = good.Acquire(ctx, key, ttl)
		time.Sleep(ttl + 100*time.Millisecond)
		next.Acquire(ctx, key, 5*time.Second)
		if r := good.Release(ctx, key, a.Token); r.Outcome != history.Fail {
			t.Fatalf("DELIFEQ after expiry: %v, want fail", r)
		}
	})

	t.Run("extend without PX leaves PTTL -1", func(t *testing.T) {
		flushAll(t, raw)
		c := newTestClient(t, "mutant-extend-nopx", cfg)
		a := c.Acquire(ctx, key, 10*time.Second) // long enough that the extend surely finds it
		if r := c.Extend(ctx, key, a.Token, ttl); r.Outcome != history.OK {
			t.Fatalf("extend: %v", r)
		}
		if p := pttl(t, raw, key); p != -1 {
			t.Fatalf("PTTL %d, the bug leaves -1", p)
		}
		time.Sleep(2 * ttl)
		if other := newTestClient(t, "native", cfg).Acquire(ctx, key, ttl); other.Outcome != history.Fail {
			t.Fatalf("acquire long after the lease: %v; the key should never expire", other)
		}
	})

	t.Run("KEEPTTL extend does not move the deadline", func(t *testing.T) {
		flushAll(t, raw)
		c := newTestClient(t, "mutant-extend-keepttl", cfg)
		a := c.Acquire(ctx, key, 3*time.Second)
		before := pexpireTime(t, raw, key)
		time.Sleep(400 * time.Millisecond)
		if r := c.Extend(ctx, key, a.Token, 3*time.Second); r.Outcome != history.OK {
			t.Fatalf("extend: %v", r)
		}
		if after := pexpireTime(t, raw, key); after != before {
			t.Fatalf("PEXPIRETIME %d after the extend, %d before: the bug keeps the old deadline", after, before)
		}
		// The client believes it holds until 3 s after its extend; the key
		// goes 3 s after the acquire, and another client gets in then.
		awaitGone(t, raw, key)
		if other := newTestClient(t, "native", cfg).Acquire(ctx, key, time.Second); other.Outcome != history.OK {
			t.Fatalf("another acquire once the key is gone: %v, want ok", other)
		}
	})

	t.Run("INCR outside MULTI gives a stale holder the bigger fence", func(t *testing.T) {
		flushAll(t, raw)
		rec := history.NewRecorder()
		res := NewResource(rec, true, 0)
		// The stale holder is frozen between SET and INCR until its key is
		// gone and the next client has taken the lock.
		slow := cfg
		paused, resume := make(chan struct{}), make(chan struct{})
		slow.MidOp = func(context.Context, string) { close(paused); <-resume }
		stale, next := newTestClient(t, "mutant-fence-outside", slow), newTestClient(t, "fenced", cfg)
		staleCall := rec.Now()
		done := make(chan lockclient.Result)
		go func() { done <- stale.Acquire(ctx, key, ttl) }()
		<-paused
		awaitGone(t, raw, key)
		b := next.Acquire(ctx, key, 5*time.Second)
		close(resume)
		a := <-done
		if a.Outcome != history.OK || b.Outcome != history.OK || !a.HasFence || !b.HasFence {
			t.Fatalf("acquires: stale %+v, next %+v", a, b)
		}
		if a.Fence <= b.Fence {
			t.Fatalf("stale fence %d, current holder's %d: the bug hands the stale holder the bigger one", a.Fence, b.Fence)
		}
		staleWrite := rec.Now()
		if !res.Write(Write{Worker: 0, Key: key, Token: a.Token, Fence: a.Fence, HasFence: true}) {
			t.Fatal("the resource rejected the stale holder's write")
		}
		if res.Write(Write{Worker: 1, Key: key, Token: b.Token, Fence: b.Fence, HasFence: true}) {
			t.Fatal("the current holder's write was accepted after the stale one's bigger fence")
		}
		// What the history shows: a write accepted after the writer's lease
		// (acquire call + TTL) ended.
		if staleWrite <= staleCall+ttl.Nanoseconds() {
			t.Fatalf("the stale write at %d is inside the lease ending at %d", staleWrite, staleCall+ttl.Nanoseconds())
		}
		// The correct client draws both in one step: the pause cannot split them.
		flushAll(t, raw)
		good := newTestClient(t, "fenced", cfg)
		a = good.Acquire(ctx, key, ttl)
		awaitGone(t, raw, key)
		b = next.Acquire(ctx, key, time.Second)
		if a.Fence >= b.Fence {
			t.Fatalf("fenced: first fence %d, later %d", a.Fence, b.Fence)
		}
	})

	t.Run("reacquire hides a lost lock", func(t *testing.T) {
		flushAll(t, raw)
		rec := history.NewRecorder()
		hider, other := newTestClient(t, "mutant-reacquire", cfg), newTestClient(t, "native", cfg)
		record := func(worker int, kind history.Kind, token string, f func() lockclient.Result) lockclient.Result {
			call := rec.Now()
			r := f()
			rec.Add(history.Op{Client: worker, Worker: worker, Key: key, Kind: kind, Token: token, Outcome: r.Outcome, Call: call, Return: rec.Now()})
			return r
		}
		a := record(0, history.Acquire, "", func() lockclient.Result { return hider.Acquire(ctx, key, ttl) })
		time.Sleep(ttl + 100*time.Millisecond) // lost: the lease ran out
		b := record(1, history.Acquire, "", func() lockclient.Result { return other.Acquire(ctx, key, time.Second) })
		record(1, history.Release, b.Token, func() lockclient.Result { return other.Release(ctx, key, b.Token) })
		e := record(0, history.Extend, a.Token, func() lockclient.Result { return hider.Extend(ctx, key, a.Token, ttl) })
		if e.Outcome != history.OK {
			t.Fatalf("the mutant's extend after losing the lock: %v, want ok (the bug hides it)", e)
		}
		h := rec.History(history.Meta{})
		// The history gives it away: an ok extend after the lease had ended,
		// with another client's ok acquire in between.
		acq, bAcq, ext := h.Ops[0], h.Ops[1], h.Ops[3]
		if !(acq.Call+ttl.Nanoseconds() < bAcq.Call && bAcq.Outcome == history.OK && ext.Kind == history.Extend && ext.Outcome == history.OK && ext.Call > bAcq.Return) {
			t.Fatalf("history does not show the hidden loss: %+v", h.Ops)
		}
		// The correct client says the lock is lost in the same spot.
		flushAll(t, raw)
		a = other.Acquire(ctx, key, ttl)
		time.Sleep(ttl + 100*time.Millisecond)
		if r := other.Extend(ctx, key, a.Token, ttl); r.Outcome != history.Fail {
			t.Fatalf("native extend after expiry: %v, want fail", r)
		}
	})
}
