package checker

import (
	"context"
	"testing"
)

// An observation right after an extend reads the lease the extend set; one
// that the extend cannot have set is a ttl finding, and one it can is not.
func TestWrongLease(t *testing.T) {
	for _, tc := range []struct {
		name string
		pttl int64
		want Status
	}{
		{"as asked", 995, Pass},
		{"longer: seconds asked, milliseconds read as more", 5000, Fail},
		{"shorter: the old deadline kept", 400, Fail},
	} {
		h := hist(acq(1, "a1", ok, 0, 1), ext(1, "a1", ok, 600, 601), observe(tc.pttl, "a1", 603, 604), rel(1, "a1", ok, 700, 701))
		if tc.want == Fail {
			// an extend called while the observation was open may have
			// set what it read: nothing to judge
			open := hist(acq(1, "a1", ok, 0, 1), observe(tc.pttl, "a1", 600, 602), ext(1, "a1", ok, 601, 900), rel(1, "a1", ok, 950, 951))
			r, err := Run(context.Background(), open, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if c, _ := r.Check(TTL); c.Status != Pass {
				t.Errorf("%s, an extend open during the observation: ttl %s (%s), want pass", tc.name, c.Status, c.Summary)
			}
		}
		r, err := Run(context.Background(), h, Options{})
		if err != nil {
			t.Fatal(err)
		}
		c, _ := r.Check(TTL)
		if c.Status != tc.want {
			t.Errorf("%s: ttl %s (%s), want %s", tc.name, c.Status, c.Summary, tc.want)
		}
		if tc.want == Fail && (len(c.Findings) == 0 || c.Findings[0].Kind != KindWrongLease) {
			t.Errorf("%s: findings %+v, want a %s", tc.name, c.Findings, KindWrongLease)
		}
	}
}

// A run whose only failure is the resource's, with no double holder, is
// a stale write: lock-correct allows it for an unfenced client, safe does
// not; a double holder is never stale.
func TestStaleWritesClass(t *testing.T) {
	stale := Checks{{Name: DoubleHolder, Status: Pass}, {Name: Resource, Status: Fail, Count: 2}, {Name: Linearizability, Status: Pass}}
	if c := ClassOf(Violated, stale); c != ClassStale {
		t.Fatalf("class %s, want %s", c, ClassStale)
	}
	double := Checks{{Name: DoubleHolder, Status: Fail}, {Name: Resource, Status: Fail}}
	lies := Checks{{Name: DoubleHolder, Status: Pass}, {Name: Resource, Status: Fail}, {Name: Linearizability, Status: Fail}}
	for _, cs := range []Checks{double, lies} {
		if c := ClassOf(Violated, cs); c != ClassViolated {
			t.Errorf("class %s of %+v, want %s", c, cs, ClassViolated)
		}
	}
	if err := ExpectLockCorrect.MeetsClass(ClassStale, false, ""); err != nil {
		t.Errorf("lock-correct of an unfenced client's stale writes: %v", err)
	}
	if err := ExpectLockCorrect.MeetsClass(ClassStale, true, ""); err == nil {
		t.Error("lock-correct met by a fenced client's stale writes")
	}
	if err := ExpectSafe.MeetsClass(ClassStale, false, ""); err == nil {
		t.Error("safe met by stale writes")
	}
	for _, c := range []Class{ClassViolated, ClassUnknown} {
		if err := ExpectLockCorrect.MeetsClass(c, false, ""); err == nil {
			t.Errorf("lock-correct met by %s", c)
		}
	}
}
