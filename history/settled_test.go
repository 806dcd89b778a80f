package history

import "testing"

// TestSettledWaitsForCallsInFlight: the settled instant stays at the
// call of the oldest operation in flight until it is recorded (Add) or
// abandoned (Abandon), and is now once none is.
func TestSettledWaitsForCallsInFlight(t *testing.T) {
	r := NewRecorder()
	a, b := r.NewClient(), r.NewClient()
	callA := r.Begin(a)
	callB := r.Begin(b)
	if got := r.Settled(); got != callA {
		t.Fatalf("settled with two calls in flight = %d, want the oldest call %d", got, callA)
	}
	r.Abandon(a)
	if got := r.Settled(); got != callB {
		t.Fatalf("settled after the oldest call was abandoned = %d, want the other's call %d", got, callB)
	}
	r.Add(Op{Client: b, Kind: Acquire, Call: callB, Return: r.Now()})
	before := r.Now()
	if got := r.Settled(); got < before {
		t.Fatalf("settled with nothing in flight = %d, want now (at least %d)", got, before)
	}
	if r.Len() != 1 {
		t.Fatalf("recorded %d operations, want 1: an abandoned call records nothing", r.Len())
	}
}
