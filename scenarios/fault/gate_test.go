package fault

import (
	"context"
	"testing"
	"time"

	"github.com/lockcheck/lockcheck/topology"
)

func TestGateHoldsBackUntilReopened(t *testing.T) {
	var none *Gate
	if !none.Pass(context.Background()) {
		t.Fatal("a nil gate held an attempt back")
	}
	g := NewGate()
	if !g.Pass(context.Background()) {
		t.Fatal("a new gate is shut")
	}
	g.shut()
	passed := make(chan bool, 3)
	for range 3 {
		go func() { passed <- g.Pass(context.Background()) }()
	}
	select {
	case <-passed:
		t.Fatal("an attempt passed a shut gate")
	case <-time.After(50 * time.Millisecond):
	}
	g.reopen()
	for range 3 {
		if !<-passed {
			t.Fatal("an attempt was refused after the gate reopened")
		}
	}
	g.shut()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if g.Pass(ctx) {
		t.Fatal("a shut gate let an attempt through after its context ended")
	}
	g.reopen()
	g.reopen() // twice is harmless
	if !g.Pass(context.Background()) {
		t.Fatal("the gate stayed shut")
	}
}

func TestGateHurriesWhileShut(t *testing.T) {
	var none *Gate
	if none.Hurry() != nil {
		t.Fatal("a nil gate hurries")
	}
	g := NewGate()
	h := g.Hurry()
	if closed(h) {
		t.Fatal("an open gate hurries")
	}
	g.shut()
	if !closed(h) || !closed(g.Hurry()) {
		t.Fatal("a shut gate does not hurry a holder that asked before or after it shut")
	}
	g.shut() // twice is harmless
	g.reopen()
	if closed(g.Hurry()) {
		t.Fatal("a reopened gate still hurries")
	}
	var zero Gate
	zero.shut()
	if !closed(zero.Hurry()) {
		t.Fatal("a zero gate, shut, does not hurry")
	}
}

func closed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// TestSettleKey: the key settle writes is in the lock key's slot, so the
// key's primary in a cluster takes it rather than answering MOVED.
func TestSettleKey(t *testing.T) {
	for _, key := range []string{"lock:{k1}", "plain"} {
		if got, want := topology.KeySlot(settleKey(key)), topology.KeySlot(key); got != want {
			t.Errorf("settleKey(%q) = %q in slot %d, want slot %d", key, settleKey(key), got, want)
		}
	}
}
