package shrink

import (
	"fmt"
	"slices"
	"time"

	"github.com/lockcheck/lockcheck/scenarios"
	"github.com/lockcheck/lockcheck/scenarios/fault"
)

// A Cut is one smaller scenario lockcheck shrink tries: what it takes
// away, in a few words, and the scenario without it.
type Cut struct {
	What     string
	Scenario scenarios.Scenario
}

// Pinned is s with its fault schedule fixed (Events): the steps the seed
// drew, which a shrink can then drop or move one by one; s is resolved.
func Pinned(s scenarios.Scenario) (scenarios.Scenario, error) {
	events, err := s.Schedule()
	if err != nil {
		return s, err
	}
	s.Events = events
	if s.Events == nil {
		s.Events = []fault.Event{}
	}
	return s, nil
}

// Cuts lists the smaller scenarios to try next from s (resolved, its
// schedule pinned), in the order they are tried: a shorter lease first
// (every later run is shorter), the workload's noise off (stalls and
// pauses make a run's timing vary, and a steadier run makes the later
// cuts' verdicts surer), a shorter run, fewer clients, each noise alone,
// fewer fault steps and earlier ones, and last one key. seen is the time
// of the violation in the last run that showed it (from the start): a
// run need not last much longer. Every cut keeps the seed, so the
// workload's choices stay those of the scenario it came from wherever
// the cut leaves them alone.
func Cuts(s scenarios.Scenario, seen time.Duration) []Cut {
	var l cutList
	l.shorterLease(s)
	// All the noise off at once first: when the violation needs none of
	// it, one cut does what six would.
	if quiet := noiseless(s); quiet.Command() != s.Command() {
		l.add("the workload's noise off (stalls, pauses, late and abandoned holds, retry backoff, observer)", quiet)
	}
	l.shorterRun(s, seen)
	l.fewerClients(s)
	l.eachNoise(s)
	l.fewerFaultSteps(s)
	l.earlierFaultSteps(s)
	if s.Keys > 1 {
		c := s
		c.Keys = 1
		c.Events = slices.Clone(s.Events)
		for i := range c.Events {
			c.Events[i].Key = scenarios.LockKey(0)
		}
		l.add(fmt.Sprintf("1 key (was %d)", s.Keys), c)
	}
	return l
}

// cutList gathers the cuts in the order they are tried; a cut whose
// scenario does not validate is left out.
type cutList []Cut

func (l *cutList) add(what string, c scenarios.Scenario) {
	if c.Validate() == nil {
		*l = append(*l, Cut{What: what, Scenario: c})
	}
}

// shorterLease adds a shorter lease, which makes every run shorter: the
// workload's times and the fault steps scale with it (a fifth, a third,
// half; a failover needs a lease that outlasts it).
func (l *cutList) shorterLease(s scenarios.Scenario) {
	var ttls []time.Duration
	for _, d := range []time.Duration{5, 3, 2} {
		if ttl := max(s.TTL/d, time.Second); ttl < s.TTL && !slices.Contains(ttls, ttl) {
			ttls = append(ttls, ttl)
			l.add(fmt.Sprintf("TTL %s (was %s), the run's times scaled with it", ttl, s.TTL), scaled(s, ttl))
		}
	}
}

// shorterRun adds the run cut to last until its violation: just past
// it, or with as long again for a slower run.
func (l *cutList) shorterRun(s scenarios.Scenario, seen time.Duration) {
	for _, d := range []time.Duration{(seen + max(s.TTL/2, 200*time.Millisecond)).Round(100 * time.Millisecond), (seen*2 + time.Second).Round(time.Second)} {
		if seen > 0 && d < s.Duration {
			l.add(fmt.Sprintf("duration %s (was %s)", d, s.Duration), within(s, d))
		}
	}
}

// fewerClients adds one client, two, half and one fewer.
func (l *cutList) fewerClients(s scenarios.Scenario) {
	for _, n := range []int{1, 2, s.Clients / 2, s.Clients - 1} {
		if n >= 1 && n < s.Clients {
			c := s
			c.Clients = n
			l.add(fmt.Sprintf("%d clients (was %d)", n, s.Clients), c)
		}
	}
}

// eachNoise adds each kind of the workload's noise taken away alone.
func (l *cutList) eachNoise(s scenarios.Scenario) {
	for _, q := range []struct {
		name string
		rate *float64
	}{{"stalls", &s.StallRate}, {"pauses inside lock calls", &s.PauseRate}, {"late holds", &s.LateRate}, {"late replies", &s.LateReplyRate}, {"quiet stalls", &s.QuietStallRate}, {"abandoned holds", &s.AbandonRate}} {
		if *q.rate > 0 {
			old := *q.rate
			*q.rate = scenarios.None
			l.add("no "+q.name, s)
			*q.rate = old
		}
	}
	// Waiting clients retry less often: fewer refused acquires.
	if s.BackoffMin < s.BackoffMax {
		c := s
		c.BackoffMin = s.BackoffMax
		l.add(fmt.Sprintf("backoff %s (was %s-%s)", s.BackoffMax, s.BackoffMin, s.BackoffMax), c)
	}
	if s.ObserveEvery > 0 {
		c := s
		c.ObserveEvery = scenarios.None
		l.add("no observer", c)
	}
}

// fewerFaultSteps adds each fault step left out, when there are several.
func (l *cutList) fewerFaultSteps(s scenarios.Scenario) {
	if len(s.Events) <= 1 {
		return
	}
	for i, e := range s.Events {
		c := s
		c.Events = slices.Delete(slices.Clone(s.Events), i, i+1)
		l.add(fmt.Sprintf("without fault step %s", e), faultsOfEvents(c))
	}
}

// earlierFaultSteps adds the first step at the start, or a second after
// it: the warm-up before it is time the violation may not need (a fault
// that waits for a holder waits at the start as well).
func (l *cutList) earlierFaultSteps(s scenarios.Scenario) {
	for _, first := range []time.Duration{0, time.Second} {
		if len(s.Events) > 0 && s.Events[0].At > first+first/2 {
			shift := s.Events[0].At - first
			c := s
			c.Events = slices.Clone(s.Events)
			for i := range c.Events {
				c.Events[i].At -= shift
			}
			c.Duration = max(c.Duration-shift, c.Events[len(c.Events)-1].At+time.Second)
			l.add(fmt.Sprintf("fault steps %s earlier", shift), c)
		}
	}
}

// noiseless is s with every noise Cuts takes away one at a time taken away
// at once.
func noiseless(s scenarios.Scenario) scenarios.Scenario {
	for _, rate := range []*float64{&s.StallRate, &s.PauseRate, &s.LateRate, &s.LateReplyRate, &s.QuietStallRate, &s.AbandonRate} {
		if *rate > 0 {
			*rate = scenarios.None
		}
	}
	s.BackoffMin = max(s.BackoffMin, s.BackoffMax)
	if s.ObserveEvery > 0 {
		s.ObserveEvery = scenarios.None
	}
	return s
}

// scaled is s with the lease ttl and every time the workload draws from
// the lease (work, backoff, observations, the write's gap), the run's
// duration and its fault steps scaled by the same factor.
func scaled(s scenarios.Scenario, ttl time.Duration) scenarios.Scenario {
	scale := func(d *time.Duration) {
		if *d > 0 {
			*d = time.Duration(float64(*d) * float64(ttl) / float64(s.TTL)).Round(time.Millisecond)
		}
	}
	c := s
	for _, d := range []*time.Duration{&c.WorkMin, &c.WorkMax, &c.ObserveEvery, &c.BackoffMax, &c.WriteGap, &c.FenceGap, &c.Duration} {
		scale(d)
	}
	c.BackoffMax = max(c.BackoffMax, c.BackoffMin)
	c.Events = slices.Clone(s.Events)
	for i := range c.Events {
		scale(&c.Events[i].At)
	}
	c.TTL = ttl
	return c
}

// within is s cut to last d, without the fault steps from d on.
func within(s scenarios.Scenario, d time.Duration) scenarios.Scenario {
	s.Duration = d
	s.Events = slices.DeleteFunc(slices.Clone(s.Events), func(e fault.Event) bool { return e.At >= d })
	return faultsOfEvents(s)
}

// faultsOfEvents keeps, of a pinned scenario's faults, those a step still
// injects (a scenario with no step left keeps none).
func faultsOfEvents(s scenarios.Scenario) scenarios.Scenario {
	var faults []string
	for _, f := range s.Faults {
		if slices.ContainsFunc(s.Events, func(e fault.Event) bool { return e.Fault == f }) {
			faults = append(faults, f)
		}
	}
	s.Faults = faults
	return s
}
