package scenarios

import (
	"fmt"
	"time"

	"github.com/lockcheck/lockcheck/history"
)

// The coverage goal's figures, named once so that what CoverageGoal asks
// and what CoverageGoalText (lockcheck run -h) says are the same.
const (
	goalMinHolds           = 10
	goalHoldsPerClient     = 2
	goalContendedPerClient = 1
	goalExtends            = 3
	goalStalls             = 2
	goalPauses             = 1
	goalHoldsAfterFaults   = 2
)

// CoverageGoal is what a run must have exercised before UntilCovered may
// end it: holds (twice the clients, at least 10) and acquires that met a
// held lock (one per client) for a double holder to have had its chances,
// extends where
// the work outlasts an extend period, a few stalls and pauses where the
// workload draws them, and every planned fault step over with the lock
// handed out again after the last (CoveredAfterFaults later). Like the
// two below, it reads a resolved Scenario.
func (s Scenario) CoverageGoal(planned int) history.Coverage {
	g := history.Coverage{Holds: int64(max(goalMinHolds, goalHoldsPerClient*s.Clients)), Contended: int64(goalContendedPerClient * s.Clients), Faults: planned, Planned: planned}
	if s.WorkMax > s.TTL/3 {
		g.Extends = goalExtends
	}
	if s.StallRate > 0 {
		g.Stalls = goalStalls
	}
	if s.PauseRate > 0 {
		g.Pauses = goalPauses
	}
	if planned > 0 {
		g.HoldsAfterFaults = goalHoldsAfterFaults
	}
	return g
}

// CoverageGoalText says what CoverageGoal asks, in words, from its own
// figures: lockcheck run -h prints it for --until-covered.
func CoverageGoalText() string {
	return fmt.Sprintf("max(%d, %d x clients) holds, %d contended acquire per client, %d extends where the work outlasts an extend period (TTL/3), %d stalls and %d pause where the workload draws them, every fault step over and the lock handed out %d times after the last, a lease later",
		goalMinHolds, goalHoldsPerClient, goalContendedPerClient, goalExtends, goalStalls, goalPauses, goalHoldsAfterFaults)
}

// CoveredAfterFaults is how long after the last fault step a run goes on
// at least: a lease granted before it ended has run out, so a double
// holder the fault made has shown.
func (s Scenario) CoveredAfterFaults() time.Duration { return s.TTL }

// Overtime is how long a run may go on past its duration for its last
// fault step's aftermath (CoveredAfterFaults after the step ended): a fault that waits for its moment must not end up with a run
// that ends before the race could show. At most the duration again; none
// without faults. A run cut short by it says so in its verdict (the
// checker's not-reproduced class).
func (s Scenario) Overtime() time.Duration {
	if len(s.Faults) == 0 && len(s.Events) == 0 {
		return 0
	}
	return s.Duration
}

// covers says whether c has everything goal asks for.
func covers(c, goal history.Coverage) bool {
	return c.Holds >= goal.Holds && c.Contended >= goal.Contended && c.Extends >= goal.Extends &&
		c.Stalls >= goal.Stalls && c.Pauses >= goal.Pauses && c.Faults >= goal.Faults && c.HoldsAfterFaults >= goal.HoldsAfterFaults
}

// coverageWatch follows a running workload's coverage, tick by tick.
type coverageWatch struct {
	goal   history.Coverage
	after  time.Duration
	faults func() int
	// faultsOver is when every planned step was first seen over, and
	// holdsThen the holds at that moment.
	faultsOver time.Time
	holdsThen  int64
	cov        history.Coverage
}

// aftermathSeen says every planned fault step is over, a lease ago or
// more: what a run past its duration waits for, and what the checker asks
// of a run that shows nothing (checker.ClassNotReproduced).
func (c *coverageWatch) aftermathSeen(now time.Time) bool {
	if c.goal.Planned == 0 {
		return true
	}
	return !c.faultsOver.IsZero() && now.Sub(c.faultsOver) >= c.after
}

// update takes the workload's counters now and says whether the goal is
// met.
func (c *coverageWatch) update(st Stats, now time.Time) bool {
	c.cov.Holds, c.cov.Contended, c.cov.Extends = st.Acquired, st.AcquireFailed, st.Extended
	c.cov.Stalls, c.cov.Pauses = st.Stalls, st.Pauses
	c.cov.Planned = c.goal.Planned
	if c.faults != nil {
		c.cov.Faults = c.faults()
	}
	if c.cov.Faults >= c.cov.Planned && c.faultsOver.IsZero() {
		c.faultsOver, c.holdsThen = now, st.Acquired
	}
	if !c.faultsOver.IsZero() {
		c.cov.HoldsAfterFaults = st.Acquired - c.holdsThen
	}
	return covers(c.cov, c.goal) && (c.goal.Planned == 0 || now.Sub(c.faultsOver) >= c.after)
}
