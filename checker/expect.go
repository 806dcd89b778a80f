package checker

import (
	"fmt"
	"strings"
)

// Expectation is what a gate demands of a run: a lock library's CI states
// it once (locktest, lockcheck run --expect) and passes or fails by it
// alone, whatever else the run shows.
type Expectation string

const (
	// ExpectLockCorrect: what a correct lock can still promise when its
	// holders are slow at the wrong moment (the default workload's stalls,
	// late holds and pauses inside lock calls): no two workers believe
	// they hold at once (a fenced client's two holders under a fault are
	// allowed when its fence stops the stale one), every reply is one the
	// server could have given, no key is left without expiry or stuck,
	// and no lock command is refused as one the server does not
	// understand. An unfenced holder's write after its lease ended (class
	// stale-writes) is allowed and reported as what it is: only a fence
	// stops it. The default gate of lockcheck run, locktest and the
	// adapter check.
	ExpectLockCorrect Expectation = "lock-correct"
	// ExpectSafe: every check passes and no two workers ever held the lock
	// at once, fenced or not: what a library shows in a quiet scenario
	// (no stalls, no pauses, no faults), where even a stale write cannot
	// happen.
	ExpectSafe Expectation = "safe"
	// ExpectFenceHolds: two holders are allowed, but the fence stops the
	// stale one (class safe or fenced): every other check passes. Only a
	// client that draws fences can meet it; what a fenced library gates on
	// under failover.
	ExpectFenceHolds Expectation = "fence-holds"
)

// Expectations lists the expectations a gate can state.
var Expectations = []Expectation{ExpectLockCorrect, ExpectSafe, ExpectFenceHolds}

// DefaultExpectation is the gate a run is judged by when none is named.
const DefaultExpectation = ExpectLockCorrect

// ParseExpectation reads an expectation's name.
func ParseExpectation(s string) (Expectation, error) {
	for _, e := range Expectations {
		if string(e) == s {
			return e, nil
		}
	}
	names := make([]string, len(Expectations))
	for i, e := range Expectations {
		names[i] = string(e)
	}
	return "", fmt.Errorf("unknown expectation %q: choose one of %s", s, strings.Join(names, ", "))
}

// Meets says whether r meets e; the error names the checks that did not,
// with their summaries, in one line. fenced says whether the run's client
// draws fences (history Meta.Fenced).
func (e Expectation) Meets(r *Result, fenced bool) error {
	return e.MeetsClass(r.Class, fenced, r.Why())
}

// MeetsClass is Meets for a run known by its class alone (a matrix cell),
// why saying what decided the class.
func (e Expectation) MeetsClass(class Class, fenced bool, why string) error {
	switch e {
	case ExpectLockCorrect:
		if class == ClassSafe || (class == ClassFenced && fenced) || (class == ClassStale && !fenced) {
			return nil
		}
	case ExpectSafe:
		if class == ClassSafe {
			return nil
		}
	case ExpectFenceHolds:
		if !fenced {
			return fmt.Errorf("expected %s, but the client draws no fences: a client without fences can only be expected %s", e, ExpectSafe)
		}
		if class == ClassSafe || class == ClassFenced {
			return nil
		}
	default:
		return fmt.Errorf("unknown expectation %q", e)
	}
	return fmt.Errorf("expected %s, got %s: %s", e, class, why)
}

// Why names the checks behind a result's class with their summaries:
// the failed ones, else the undecided ones, else the allowed double
// holders.
func (r *Result) Why() string {
	var parts []string
	for _, st := range []Status{Fail, Unknown} {
		for _, c := range r.Checks {
			if c.Status == st {
				parts = append(parts, c.Name+" "+string(st)+" ("+c.Summary+")")
			}
		}
		if len(parts) > 0 {
			return strings.Join(parts, "; ")
		}
	}
	if c, ok := r.Checks.Find(DoubleHolder); ok && c.Status == Allowed && c.Count > 0 {
		return c.Name + " allowed (" + c.Summary + "), fence " + string(mustFind(r.Checks, Fence).Status)
	}
	return r.Summary
}

func mustFind(cs Checks, name string) Check {
	c, _ := cs.Find(name)
	return c
}
