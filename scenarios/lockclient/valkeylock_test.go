package lockclient

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/valkey-io/valkey-go/valkeylock"

	"github.com/lockcheck/lockcheck/history"
)

// TestValkeylockRenewsAForgottenLock reproduces, with valkeylock alone and
// no lockcheck client, why a run with abandoned holds found its key
// "stuck": a lock whose context is never cancelled is renewed for as long
// as the process lives, long past its KeyValidity. That is the library's
// design (a lock lives as long as its context), not a lost lock.
func TestValkeylockRenewsAForgottenLock(t *testing.T) {
	topo := sharedStandalone(t, "valkey-9.1")
	// Renewals come every half validity: 1 s of slack for a loaded machine.
	validity := 2 * time.Second
	l, err := valkeylock.NewLocker(valkeylock.LockerOption{ClientOption: topo.ClientOption(), KeyValidity: validity, KeyMajority: 1,
		// Its 20 ms default per attempt fails on a loaded machine.
		TryNextAfter: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	ctx := context.Background()
	_, cancel, err := l.TryWithContext(ctx, "forgotten")
	if err != nil {
		t.Fatal(err)
	}
	// The holder forgets the lock: no cancel for three validity periods.
	time.Sleep(3 * validity)
	if _, _, err := l.TryWithContext(ctx, "forgotten"); !errors.Is(err, valkeylock.ErrNotLocked) {
		t.Fatalf("a second acquire three validity periods later: %v, want ErrNotLocked (the forgotten lock still held)", err)
	}
	if p := pttl(t, direct(t, topo), "valkeylock:0:forgotten"); p <= 0 || p > validity.Milliseconds() {
		t.Fatalf("PTTL %d: the forgotten lock is not being renewed", p)
	}
	cancel()
	awaitGone(t, direct(t, topo), "valkeylock:0:forgotten")
}

// TestValkeylockLeaseLapses shows the adapter giving a lock the workload's
// lease: neither extended nor released within its TTL, it is gone (as a
// crashed holder's would be), an extend then fails, and another client
// takes the key; a lock extended in time stays held.
func TestValkeylockLeaseLapses(t *testing.T) {
	topo := sharedStandalone(t, "valkey-9.1")
	cfg := ConfigFor(topo)
	a, b := newTestClient(t, "valkeylock", cfg), newTestClient(t, "valkeylock", cfg)
	defer a.Close()
	defer b.Close()
	ctx := context.Background()
	// Extends come a quarter lease apart: 1.5 s of slack for a loaded
	// machine before a lease lapses between them.
	ttl := 2 * time.Second
	ra := a.Acquire(ctx, "lapse", ttl)
	if ra.Outcome != history.OK {
		t.Fatalf("acquire: %+v", ra)
	}
	for range 3 {
		time.Sleep(ttl / 4)
		if r := a.Extend(ctx, "lapse", ra.Token, ttl); r.Outcome != history.OK {
			t.Fatalf("an extend within the lease: %+v", r)
		}
	}
	if r := b.Acquire(ctx, "lapse", ttl); r.Outcome != history.Fail {
		t.Fatalf("another client's acquire of a lock extended in time: %+v", r)
	}
	// Abandoned: no call for twice the lease.
	time.Sleep(2 * ttl)
	if r := a.Extend(ctx, "lapse", ra.Token, ttl); r.Outcome != history.Fail {
		t.Fatalf("an extend after the lease lapsed: %+v", r)
	}
	if r := b.Acquire(ctx, "lapse", ttl); r.Outcome != history.OK {
		t.Fatalf("another client's acquire after the lease lapsed: %+v", r)
	}
	if r := a.Release(ctx, "lapse", ra.Token); r.Outcome != history.Fail {
		t.Fatalf("a release after the lease lapsed: %+v", r)
	}
}

// TestValkeylockLapseIsRecorded: the lock commands valkeylock runs on
// its own reach the history (Config.Aside) as its holder's: each renewal
// as an extend with the lease it set, and a lapse's delete as a release
// at the delete's times; a Release's own delete is the Release's and is
// not reported; every script begun aside is ended, reported or not, so
// the recorder's settled instant does not stay behind. It also fails if the library's scripts change, which the
// watch knows by their text.
func TestValkeylockLapseIsRecorded(t *testing.T) {
	topo := sharedStandalone(t, "valkey-9.1")
	var mu sync.Mutex
	var asides []Aside
	open := 0 // begun and not yet ended
	cfg := ConfigFor(topo)
	cfg.Aside = func() func(*Aside) {
		mu.Lock()
		open++
		mu.Unlock()
		return func(a *Aside) {
			mu.Lock()
			defer mu.Unlock()
			open--
			if a != nil {
				asides = append(asides, *a)
			}
		}
	}
	reported := func(kind history.Kind) []Aside {
		mu.Lock()
		defer mu.Unlock()
		var out []Aside
		for _, a := range asides {
			if a.Kind == kind {
				out = append(out, a)
			}
		}
		return out
	}
	c := newTestClient(t, "valkeylock", cfg)
	ctx := context.Background()
	ttl := 2 * time.Second
	r := c.Acquire(ctx, "aside", ttl)
	if r.Outcome != history.OK {
		t.Fatalf("acquire: %+v", r)
	}
	if rel := c.Release(ctx, "aside", r.Token); rel.Outcome != history.OK {
		t.Fatalf("release of a held lock: %+v", rel)
	}
	if a := reported(history.Release); len(a) != 0 {
		t.Fatalf("a Release's own delete was reported aside: %+v", a)
	}
	r = c.Acquire(ctx, "aside", ttl)
	if r.Outcome != history.OK {
		t.Fatalf("second acquire: %+v", r)
	}
	// Abandoned: the library renews it every half TTL until the lapse,
	// TTL after the acquire began, deletes it.
	deadline := time.Now().Add(2*ttl + 5*time.Second)
	for len(reported(history.Release)) == 0 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	rels := reported(history.Release)
	if len(rels) != 1 {
		t.Fatalf("the lapse's delete: %d releases reported aside, want 1: %+v", len(rels), rels)
	}
	if got := rels[0]; got.Key != "aside" || got.Token != r.Token || got.Result.Outcome != history.OK || got.Return < got.Call {
		t.Fatalf("the lapse's delete was reported as %+v, want an OK release of key aside, token %s", got, r.Token)
	}
	exts := reported(history.Extend)
	if len(exts) == 0 {
		t.Fatalf("no renewal reported in a hold of %v renewed every %v", ttl, ttl/2)
	}
	for _, e := range exts {
		if e.Key != "aside" || e.Token != r.Token || e.TTL != ttl || e.Result.Outcome != history.OK || e.Call > rels[0].Call {
			t.Fatalf("a renewal was reported as %+v, want an OK extend of key aside, token %s, for %v, before the delete", e, r.Token, ttl)
		}
	}
	if rel := c.Release(ctx, "aside", r.Token); rel.Outcome != history.Fail {
		t.Fatalf("a release after the lapse: %+v", rel)
	}
	if len(reported(history.Release)) != 1 {
		t.Fatalf("a Release after the lapse reported another delete: %+v", reported(history.Release))
	}
	mu.Lock()
	defer mu.Unlock()
	if open != 0 {
		t.Fatalf("%d scripts begun aside were never ended: the recorder would count them in flight for ever", open)
	}
}
