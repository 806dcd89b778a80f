package fault

import (
	"context"
	"testing"
	"time"
)

// TestHold: an armed hold catches the first worker to land an acquire,
// and only it; that worker waits until it is let go or its run ends;
// acquires skip their pause while a hold is armed or kept.
func TestHold(t *testing.T) {
	f := NewFreezer()
	if f.Racing() {
		t.Fatal("racing before anything was armed")
	}
	f.Landed(1) // nothing armed: no hold
	f.arm()
	if !f.Racing() {
		t.Fatal("an armed hold does not make the acquires plain")
	}
	f.Landed(2)
	f.Landed(3) // the hold is taken: 3 goes on
	w, ok := f.awaitLanded(context.Background(), time.Second)
	if !ok || w != 2 {
		t.Fatalf("caught %d, %v; want worker 2", w, ok)
	}
	for _, free := range []int{1, 3} {
		done := make(chan struct{})
		go func() { f.Wait(free, nil); close(done) }()
		select {
		case <-done:
		case <-time.After(time.Second):
			t.Fatalf("worker %d was held", free)
		}
	}
	held := make(chan struct{})
	go func() { f.Wait(2, nil); close(held) }()
	select {
	case <-held:
		t.Fatal("the caught worker was not held")
	case <-time.After(50 * time.Millisecond):
	}
	f.release(2)
	select {
	case <-held:
	case <-time.After(time.Second):
		t.Fatal("the caught worker stayed held after its release")
	}
	if f.Racing() {
		t.Fatal("still racing with nothing armed or held")
	}

	// A held worker whose run ends goes on.
	f.arm()
	f.Landed(4)
	end := make(chan struct{})
	close(end)
	gone := make(chan struct{})
	go func() { f.Wait(4, end); close(gone) }()
	select {
	case <-gone:
	case <-time.After(time.Second):
		t.Fatal("a held worker did not go on when its run ended")
	}

	// Nobody lands: the wait ends at its limit, disarmed.
	g := NewFreezer()
	g.arm()
	if _, ok := g.awaitLanded(context.Background(), 20*time.Millisecond); ok || g.Racing() {
		t.Fatalf("caught %v, racing %v with nobody landing", ok, g.Racing())
	}
}
