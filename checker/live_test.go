package checker

import (
	"context"
	"path/filepath"
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
	l := NewLiveCount(rec, time.Second, false)
	ctx := context.Background()
	time.Sleep(20 * time.Millisecond) // the made-up times are behind the recorder's clock
	if n := l.Update(ctx); n != 1 {
		t.Fatalf("after a double holder: %d violations, want 1", n)
	}
	if n := l.Update(ctx); n != 1 {
		t.Fatalf("counted again on the next update: %d", n)
	}
	l.span = 1                        // every operation so far leaves the window
	time.Sleep(20 * time.Millisecond) // past the recorded returns
	rec.Add(history.Op{Client: 2, Worker: 2, Key: "lock:{other}", Kind: history.Acquire, Token: "c", TTLms: 1000,
		Outcome: history.OK, Call: rec.Now(), Return: rec.Now() + ms})
	if n := l.Update(ctx); n != 1 || len(l.window) != 1 {
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
		if n := NewLiveCount(rec, time.Second, fenced).Update(context.Background()); n != 0 {
			t.Errorf("a fenced run's double holder counted (fenced by its kind: %v): %d", fenced, n)
		}
	}
}

// A streaming recorder keeps only its latest operations: when more were
// recorded between two pulls, the live count starts its window again
// instead of checking a window with a hole (here the release of a lock
// would be missing, and the next holder would count as a second one).
func TestLiveCountAfterAGap(t *testing.T) {
	rec := history.NewRecorder()
	if err := rec.StreamTo(filepath.Join(t.TempDir(), history.StreamName), history.Meta{}); err != nil {
		t.Fatal(err)
	}
	defer rec.CloseStream()
	ms := int64(time.Millisecond)
	op := func(worker int, key string, kind history.Kind, token string, out history.Outcome, call int64) history.Op {
		return history.Op{Client: worker, Worker: worker, Key: key, Kind: kind, Token: token, TTLms: 60_000, Outcome: out, Call: call, Return: call + ms}
	}
	rec.Add(op(0, "lock:{k}", history.Acquire, "a", history.OK, 0))
	l := NewLiveCount(rec, time.Minute, false)
	l.Pull()
	rec.Add(op(0, "lock:{k}", history.Release, "a", history.OK, 10*ms))
	for i := range history.TailOps + 10 { // the release leaves the recorder's tail
		rec.Add(op(2, "lock:{other}", history.Acquire, "x", history.Fail, 20*ms+int64(i)))
	}
	rec.Add(op(1, "lock:{k}", history.Acquire, "b", history.OK, 30*ms))
	if n := l.Update(context.Background()); n != 0 {
		t.Fatalf("a lock released in the operations the recorder no longer has counted as a double holder: %d violations", n)
	}
}

// A release still in flight leaves its hold open in the window: the next
// holder's acquire, recorded first, is not counted as a double holder
// while the release may still end the hold before it.
func TestLiveCountWaitsForOperationsInFlight(t *testing.T) {
	rec := history.NewRecorder()
	ms := int64(time.Millisecond)
	op := func(worker int, kind history.Kind, token string, call, ret int64) history.Op {
		return history.Op{Client: worker, Worker: worker, Key: "lock:{k}", Kind: kind, Token: token, TTLms: 60_000,
			Outcome: history.OK, Call: call, Return: ret}
	}
	rec.Add(op(0, history.Acquire, "a", 0, ms))
	release := rec.Begin(0) // worker 0's release is on its way
	time.Sleep(2 * time.Millisecond)
	rec.Add(op(1, history.Acquire, "b", rec.Now(), rec.Now()+ms)) // the lock was free: worker 1 got it
	time.Sleep(5 * time.Millisecond)
	l := NewLiveCount(rec, time.Minute, false)
	ctx := context.Background()
	if n := l.Update(ctx); n != 0 {
		t.Fatalf("a double holder counted while the first holder's release was in flight: %d", n)
	}
	rec.Add(op(0, history.Release, "a", release, release+ms/2))
	if n := l.Update(ctx); n != 0 {
		t.Fatalf("after the release was recorded: %d violations, want 0", n)
	}
	if s := rec.Settled(); s < rec.Now()-ms {
		t.Fatalf("settled at %d with nothing in flight, now %d", s, rec.Now())
	}
}

// A fenced run whose first holder's release is still in flight (frozen
// inside the call, after the server deleted the key): the next holder's
// acquire and write are no fence finding, though the window shows the
// first hold open, since the release has not been recorded yet.
func TestLiveCountWaitsForAReleaseInFlight(t *testing.T) {
	rec := history.NewRecorder()
	ms := int64(time.Millisecond)
	rec.Add(history.Op{Client: 0, Worker: 0, Key: "lock:{k}", Kind: history.Acquire, Token: "a", TTLms: 10000,
		Outcome: history.OK, Call: 0, Return: ms, Fence: 1, HasFence: true})
	time.Sleep(5 * time.Millisecond)
	rec.Begin(0) // worker 0's release, in flight from here
	time.Sleep(5 * time.Millisecond)
	now := rec.Now()
	rec.Add(history.Op{Client: 1, Worker: 1, Key: "lock:{k}", Kind: history.Acquire, Token: "b", TTLms: 10000,
		Outcome: history.OK, Call: now, Return: now + ms, Fence: 2, HasFence: true})
	rec.Add(history.Op{Client: 1, Worker: 1, Key: "lock:{k}", Kind: history.Write, Token: "b", Fence: 2, HasFence: true,
		Outcome: history.OK, Call: now + 2*ms, Return: now + 3*ms})
	time.Sleep(10 * time.Millisecond)
	if n := NewLiveCount(rec, 10*time.Second, true).Update(context.Background()); n != 0 {
		t.Fatalf("%d violations while worker 0's release is in flight, want 0", n)
	}
}
