package harness

import (
	"context"
	"testing"
	"time"

	"github.com/lockcheck/lockcheck/history"
)

// The live count finds a double holder in the recent window, counts it
// once across updates, and keeps it after its operations left the window.
func TestLiveCount(t *testing.T) {
	rec := history.NewRecorder()
	ms := int64(time.Millisecond)
	acquire := func(client int, token string, call int64) history.Op {
		return history.Op{Client: client, Worker: client, Key: "lock:{k}", Kind: history.Acquire, Token: token, TTLms: 1000,
			Outcome: history.OK, Call: call, Return: call + ms}
	}
	rec.Add(acquire(0, "a", 0))
	rec.Add(acquire(1, "b", 10*ms)) // inside a's lease: two holders
	l := newLiveCount(rec, time.Second, false)
	ctx := context.Background()
	if n := l.update(ctx); n != 1 {
		t.Fatalf("after a double holder: %d violations, want 1", n)
	}
	if n := l.update(ctx); n != 1 {
		t.Fatalf("counted again on the next update: %d", n)
	}
	l.span = 1                        // every operation so far leaves the window
	time.Sleep(20 * time.Millisecond) // past the recorded returns
	rec.Add(history.Op{Client: 2, Worker: 2, Key: "lock:{other}", Kind: history.Acquire, Token: "c", TTLms: 1000,
		Outcome: history.OK, Call: rec.Now(), Return: rec.Now() + ms})
	if n := l.update(ctx); n != 1 || len(l.window) != 1 {
		t.Fatalf("after the window moved on: %d violations, window of %d ops; want 1 and 1", n, len(l.window))
	}
}

// A fenced run's double holders are allowed: the live count leaves them
// out, also when only the acquires' fences say the run is fenced (an
// external adapter that draws them).
func TestLiveCountLeavesOutAllowed(t *testing.T) {
	rec := history.NewRecorder()
	ms := int64(time.Millisecond)
	for i, tok := range []string{"a", "b"} {
		rec.Add(history.Op{Client: i, Worker: i, Key: "lock:{k}", Kind: history.Acquire, Token: tok, TTLms: 1000,
			Outcome: history.OK, Call: int64(i) * 10 * ms, Return: int64(i)*10*ms + ms, Fence: int64(i), HasFence: true})
	}
	for _, fenced := range []bool{true, false} {
		if n := newLiveCount(rec, time.Second, fenced).update(context.Background()); n != 0 {
			t.Errorf("a fenced run's double holder counted (fenced by its kind: %v): %d", fenced, n)
		}
	}
}
