package scenarios

import (
	"math/rand/v2"
	"reflect"
	"testing"
	"time"

	"github.com/lockcheck/lockcheck/history"
)

func TestPlansSeeded(t *testing.T) {
	w := Workload{Scenario: adversarial(Scenario{TrafficSettings: TrafficSettings{Seed: 42, TTL: 300 * time.Millisecond, Clients: 3, Keys: 4}}).WithDefaults()}.withDefaults()
	draw := func(w Workload, worker int) []Plan {
		p := newPlanner(w, worker)
		var out []Plan
		for range 200 {
			out = append(out, p.next())
		}
		return out
	}
	a, b := draw(w, 1), draw(w, 1)
	if !reflect.DeepEqual(a, b) {
		t.Fatal("one seed and worker gave two sequences of plans")
	}
	if reflect.DeepEqual(a, draw(w, 2)) {
		t.Fatal("two workers drew the same plans")
	}
	w2 := w
	w2.Seed = 43
	if reflect.DeepEqual(a, draw(w2, 1)) {
		t.Fatal("two seeds drew the same plans")
	}
	var stalls, just, slow, abandons, long, short, late int
	keys := map[string]bool{}
	places := map[StallWhere]int{}
	pauses := map[history.Kind]int{}
	for _, p := range a {
		keys[p.Key] = true
		if p.Stall > 0 {
			stalls++
			places[p.StallWhere]++
			if p.Stall <= w.TTL {
				t.Fatalf("stall %v not longer than the TTL %v", p.Stall, w.TTL)
			}
			if p.StallJust {
				just++
				if p.StallPast < 12*time.Millisecond || p.StallPast > 18*time.Millisecond || p.StallWhere != StallBeforeExtend {
					t.Fatalf("a stall that ends %v past the lease, %s: want 12-18 ms, before an extend", p.StallPast, p.StallWhere)
				}
			}
			if p.Pause > 0 && p.PauseIn == history.Release {
				t.Fatalf("a hold frozen in its release stalls %s: the release would find the lock gone", p.StallWhere)
			}
			if p.Pause > 0 && p.PauseIn != history.Acquire && p.StallWhere != StallBeforeRelease {
				t.Fatalf("a hold frozen in its %s stalls %s: the stall would lose the lock before the frozen call", p.PauseIn, p.StallWhere)
			}
			if p.StallWhere != StallBeforeRelease && p.StallAt >= steps(p.Work, p.Step)-1 {
				t.Fatalf("a stall %s at step %d of %d: no extend follows it", p.StallWhere, p.StallAt, steps(p.Work, p.Step))
			}
		}
		if p.Pause > 0 {
			pauses[p.PauseIn]++
			switch {
			case p.PauseSlow:
				// frozen before its command goes out, past the call's
				// deadline and within the lease
				slow++
				if p.PauseIn != history.Acquire || p.Pause <= SlowDeadline(w.Scenario) || p.Pause >= SlowDeadline(w.Scenario)+w.TTL/4 {
					t.Fatalf("a slow pause of %v in %s: want an acquire's, %v to %v", p.Pause, p.PauseIn, SlowDeadline(w.Scenario), SlowDeadline(w.Scenario)+w.TTL/4)
				}
			case p.Pause <= w.TTL:
				t.Fatalf("pause %v not longer than the TTL %v", p.Pause, w.TTL)
			}
		}
		if p.Abandon {
			abandons++
		}
		if p.Work > w.TTL {
			long++
		}
		if p.Work < w.TTL/3 {
			short++
		}
		if p.Step != w.TTL/3 {
			late++
			if p.Step < w.TTL*17/20-w.WriteGap || p.Step > w.TTL*49/50-w.WriteGap || p.Work%p.Step != 0 {
				t.Fatalf("a late hold steps every %v for %v: want 0.85-0.98 TTL less the write gap, whole steps", p.Step, p.Work)
			}
			continue
		}
		if p.Work < w.WorkMin || p.Work > w.WorkMax {
			t.Fatalf("work %v outside [%v, %v]", p.Work, w.WorkMin, w.WorkMax)
		}
	}
	if len(keys) != 4 || stalls == 0 || long == 0 || short == 0 || late == 0 {
		t.Fatalf("200 plans used %d keys, %d stalls, %d holds longer than the TTL, %d shorter than a step, %d late", len(keys), stalls, long, short, late)
	}
	if just == 0 || just == stalls || slow == 0 || slow == pauses[history.Acquire] {
		t.Fatalf("%d of %d stalls end just past the lease, %d of %d acquire pauses are slow: want some of each kind", just, stalls, slow, pauses[history.Acquire])
	}
	if len(places) != 3 || pauses[history.Acquire] == 0 || pauses[history.Extend] == 0 || pauses[history.Release] == 0 {
		t.Fatalf("stalls at %v, pauses in %v: want every place", places, pauses)
	}
}

func TestBackoff(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	lo, hi := 5*time.Millisecond, 80*time.Millisecond
	for n := range 40 {
		d := backoff(n, lo, hi, r)
		ceil := min(lo<<min(n, 20), hi)
		if d < ceil/2 || d > ceil {
			t.Fatalf("attempt %d: backoff %v outside [%v, %v]", n, d, ceil/2, ceil)
		}
	}
}

// Quiet stalls come from a source of their own: with them off, every
// other choice of a seed's plans is the same, and with them on, about the
// rate's share of the stalls that end just past the lease are quiet, and
// no other stall is.
func TestQuietStallsDrawnApart(t *testing.T) {
	base := adversarial(Scenario{TrafficSettings: TrafficSettings{Seed: 7, TTL: 300 * time.Millisecond, Clients: 3, Keys: 2}}).WithDefaults()
	on, off := base, base
	on.QuietStallRate, off.QuietStallRate = 0.5, None
	pOn, pOff := newPlanner(Workload{Scenario: on}.withDefaults(), 0), newPlanner(Workload{Scenario: off}.withDefaults(), 0)
	var just, quiet int
	for range 400 {
		a, b := pOn.next(), pOff.next()
		if b.StallQuiet {
			t.Fatal("a quiet stall with quiet stalls off")
		}
		if a.StallQuiet && !(a.Stall > 0 && a.StallJust) {
			t.Fatalf("a quiet stall that does not end just past the lease: %+v", a)
		}
		if a.Stall > 0 && a.StallJust {
			just++
			if a.StallQuiet {
				quiet++
			}
		}
		a.StallQuiet = false
		if !reflect.DeepEqual(a, b) {
			t.Fatalf("quiet stalls changed another choice:\n%+v\n%+v", a, b)
		}
	}
	if just < 10 || quiet < just/5 || quiet > just*4/5 {
		t.Fatalf("%d quiet of %d stalls just past the lease, at rate 0.5", quiet, just)
	}
}
