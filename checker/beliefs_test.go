package checker

import (
	"context"
	"testing"

	"github.com/lockcheck/lockcheck/history"
)

// beliefCases are histories where what a worker was told (an OK extend
// after its lease ended) and what the key held (observations) decide the
// verdict, not the tokens.
func beliefCases() []checkCase {
	return []checkCase{
		{name: "a shared token: the late extend succeeds on the other worker's lock", h: hist(
			// a's lease ends at 100; b takes the key with the same token; a
			// wakes and its extend finds "its" token: both believe they hold
			ttl(acq(1, "p", ok, 0, 1), 100), ttl(acq(2, "p", ok, 150, 151), 100),
			ttl(ext(1, "p", ok, 160, 161), 100), rel(2, "p", ok, 200, 201)),
			// the tokens agree with the server at every step
			want: map[string]Status{DoubleHolder: Fail, Linearizability: Pass}},
		{name: "a late extend that fails starts no belief", verdict: Safe, h: hist(
			ttl(acq(1, "a1", ok, 0, 1), 100), ttl(acq(2, "b1", ok, 150, 151), 100),
			ttl(ext(1, "a1", fail, 160, 161), 100), rel(2, "b1", ok, 200, 201)),
			want: map[string]Status{LostLocks: Allowed}},
		{name: "a late extend on a key nobody took is one worker's belief again", verdict: Safe, h: hist(
			// inside the clock tolerance the server still had a's key
			ttl(acq(1, "a1", ok, 0, 1), 100), ttl(ext(1, "a1", ok, 105, 106), 100),
			rel(1, "a1", ok, 150, 151), acq(2, "b1", ok, 160, 161))},
		{name: "a restarted belief ends with its own lease", verdict: Safe, h: hist(
			ttl(acq(1, "p", ok, 0, 1), 100), ttl(ext(1, "p", ok, 105, 106), 100),
			acq(2, "b1", ok, 300, 301))},
		{name: "the key observed holding a value no acquisition set", h: hist(
			ttl(acq(1, "a1", ok, 0, 1), 1000), observe(900, "zz", 5, 6), rel(1, "a1", ok, 10, 11)),
			want: map[string]Status{Linearizability: Fail}},
		{name: "the key observed gone while its lease cannot have ended", h: hist(
			ttl(acq(1, "a1", ok, 0, 1), 1000), observe(-2, "", 5, 6), ttl(ext(1, "a1", fail, 10, 11), 1000)),
			want: map[string]Status{Linearizability: Fail, LostLocks: Allowed}},
		{name: "the key observed without expiry after an acquire with PX", h: hist(
			ttl(acq(1, "a1", ok, 0, 1), 1000), observe(-1, "a1", 5, 6), rel(1, "a1", ok, 10, 11)),
			want: map[string]Status{TTL: Fail, Linearizability: Fail}},
		{name: "the key observed right after every step", verdict: Safe, h: hist(
			ttl(acq(1, "a1", ok, 0, 1), 1000), observe(999, "a1", 1, 2),
			ttl(ext(1, "a1", ok, 300, 301), 1000), observe(998, "a1", 301, 303),
			rel(1, "a1", ok, 400, 401), observe(-2, "", 401, 402))},
	}
}

func TestBeliefsAndObservations(t *testing.T) {
	for _, c := range beliefCases() {
		if c.verdict == "" {
			c.verdict = Violated
		}
		t.Run(c.name, func(t *testing.T) { runCase(t, c) })
	}
}

// TestRestartedBeliefNamesItsExtend: the finding shows which extend told
// the worker it held again.
func TestRestartedBeliefNamesItsExtend(t *testing.T) {
	h := hist(ttl(acq(1, "p", ok, 0, 1), 100), ttl(acq(2, "p", ok, 150, 151), 100), ttl(ext(1, "p", ok, 160, 161), 100))
	res, err := Run(context.Background(), h, Options{})
	if err != nil {
		t.Fatal(err)
	}
	c, _ := res.Check(DoubleHolder)
	if c.Count != 1 {
		t.Fatalf("double holders %d, want 1", c.Count)
	}
	hs := c.Findings[0].Holds
	if hs[0].Worker != 2 || hs[1].Worker != 1 || hs[1].Extend != 2 || hs[1].Acquire != 0 {
		t.Errorf("holds %+v: want worker 2's acquire, then worker 1's belief started by op 2 (acquire op 0)", hs)
	}
}

// TestFencesAcrossClockFaults: a clock fault may end a lease early, so two
// holders are allowed in it, but it never rolls a counter back: fences
// that do not grow across clock-jump or clock-strobe are violations, where
// a failover's would be allowed.
func TestFencesAcrossClockFaults(t *testing.T) {
	backwards := func() *history.History {
		return hist(
			ttl(fenced(acq(1, "a1", ok, 0, 1), 5), 10000), rel(1, "a1", ok, 100, 101),
			ttl(fenced(acq(2, "b1", ok, 300, 301), 4), 10000), rel(2, "b1", ok, 400, 401))
	}
	for _, c := range []checkCase{
		{name: "fences going backwards in a clock jump", verdict: Violated, opts: Options{AllowDoubleHolders: true},
			h:    withFaults(backwards(), fault("clock-jump", 50, 350)),
			want: map[string]Status{Linearizability: Fail}},
		{name: "one fence twice in a clock strobe", verdict: Violated, opts: Options{AllowDoubleHolders: true},
			h: withFaults(hist(
				ttl(fenced(acq(1, "a1", ok, 0, 1), 7), 10000), rel(1, "a1", ok, 100, 101),
				ttl(fenced(acq(2, "b1", ok, 300, 301), 7), 10000), rel(2, "b1", ok, 400, 401)),
				fault("clock-strobe", 50, 350)),
			want: map[string]Status{Fence: Fail, Linearizability: Fail}},
		{name: "fences going backwards across a failover", verdict: Safe, opts: Options{AllowDoubleHolders: true},
			h: withFaults(backwards(), fault("kill-primary", 50, 350))},
	} {
		t.Run(c.name, func(t *testing.T) { runCase(t, c) })
	}
}

// TestOptionsFor: the checker alone decides that a fenced run's double
// holders are allowed, and says why.
func TestOptionsFor(t *testing.T) {
	h := hist(acq(1, "a1", ok, 0, 1))
	if o := OptionsFor(h); o.AllowDoubleHolders || o.AllowedBecause != "" {
		t.Fatalf("unfenced: %+v", o)
	}
	h.Meta.Fenced = true
	if o := OptionsFor(h); !o.AllowDoubleHolders || o.AllowedBecause == "" {
		t.Fatalf("fenced: %+v", o)
	}
	// Metadata written before an external adapter's replies showed fences.
	h.Meta.Fenced = false
	h.Ops[0].Fence, h.Ops[0].HasFence = 7, true
	if o := OptionsFor(h); !o.AllowDoubleHolders {
		t.Fatalf("acquires with fences, metadata unfenced: %+v", o)
	}
}

// TestClassOf: the checker tells a fenced client's stopped double holder
// from a plain safe run, and reports read it.
func TestClassOf(t *testing.T) {
	dh := func(s Status, n int) Check { return Check{Name: DoubleHolder, Status: s, Count: n} }
	fence := func(s Status) Check { return Check{Name: Fence, Status: s} }
	for _, c := range []struct {
		v      Verdict
		checks Checks
		want   Class
	}{
		{Safe, Checks{dh(Pass, 0), fence(Skipped)}, ClassSafe},
		{Safe, Checks{dh(Allowed, 2), fence(Pass)}, ClassFenced},
		{Safe, Checks{dh(Allowed, 0), fence(Pass)}, ClassSafe},
		{Violated, Checks{dh(Allowed, 2), fence(Fail)}, ClassViolated},
		{Undecided, Checks{dh(Pass, 0)}, ClassUnknown},
	} {
		if got := ClassOf(c.v, c.checks); got != c.want {
			t.Errorf("%s %+v: class %s, want %s", c.v, c.checks, got, c.want)
		}
	}
	res, err := Run(context.Background(), withFaults(hist(
		ttl(fenced(acq(1, "a1", ok, 0, 1), 5), 10000), write(1, "a1", 5, ok, 50, 51),
		ttl(fenced(acq(2, "b1", ok, 2100, 2101), 5), 10000), write(2, "b1", 5, fail, 2200, 2201)),
		fault("kill-primary", 5, 2500)), Options{AllowDoubleHolders: true})
	if err != nil {
		t.Fatal(err)
	}
	if res.Class != ClassFenced {
		t.Fatalf("a fenced failover with the stale write rejected: class %s, want fenced", res.Class)
	}
}
