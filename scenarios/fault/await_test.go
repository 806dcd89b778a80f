package fault

import (
	"context"
	"testing"
	"time"

	"github.com/lockcheck/lockcheck/history"
	"github.com/lockcheck/lockcheck/scenarios/internal/pace"
)

// TestAwaitAcquireFrom: a fault told to count acquires from an instant
// finds one that was recorded before it started waiting (a script's
// acquire can beat the fault's goroutine), and ignores one called before
// that instant; without From, only acquires called after it starts count.
func TestAwaitAcquireFrom(t *testing.T) {
	rec := history.NewRecorder()
	acquire := func(key string) {
		now := rec.Now()
		rec.Add(history.Op{Kind: history.Acquire, Key: key, Outcome: history.OK, Call: now, Return: now})
	}
	any := func(string) bool { return true }
	ctx := context.Background()

	acquire("before")
	env := Env{Rec: rec, From: rec.Now()}
	acquire("after")
	if key, ok := awaitAcquire(ctx, env, any, 50*time.Millisecond); !ok || key != "after" {
		t.Fatalf("with From: got %q, %v; want the acquire called after From, recorded before the wait", key, ok)
	}
	if _, ok := awaitAcquire(ctx, Env{Rec: rec}, any, 50*time.Millisecond); ok {
		t.Fatal("without From: an acquire recorded before the wait counted")
	}
}

// TestPoll: a condition that holds ends the wait, one that never does
// ends it at the limit, and a cancelled context ends it with its error.
func TestPoll(t *testing.T) {
	ctx := context.Background()
	n := 0
	if err := pace.Poll(ctx, time.Minute, time.Millisecond, func() bool { n++; return n == 3 }); err != nil || n != 3 {
		t.Fatalf("held on the third check: err %v after %d checks", err, n)
	}
	if err := pace.Poll(ctx, 10*time.Millisecond, time.Millisecond, func() bool { return false }); err != pace.ErrLimit {
		t.Fatalf("never held: %v, want pace.ErrLimit", err)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if err := pace.Poll(cctx, time.Minute, time.Millisecond, func() bool { return false }); err != context.Canceled {
		t.Fatalf("cancelled: %v", err)
	}
}
