package scenarios

import (
	"fmt"
	"math/rand/v2"
	"time"
)

// Plan is what a worker does with one lock. Every choice is drawn up front
// from the worker's seeded source, in the same order whatever the servers
// answer, so one seed gives every worker the same sequence of plans in
// every run; only how often an acquire is retried differs.
type Plan struct {
	Key string
	// Work is how long the holder works, extending every TTL/3.
	Work time.Duration
	// Stall, when not 0, is a pause longer than the TTL without extends (a
	// GC pause, a swapped-out process) at step StallAt: the lease runs out
	// under the holder, whose next write is stale.
	Stall   time.Duration
	StallAt int
	// Abandon leaves without releasing, as a crashed holder would; the key
	// must then expire by its TTL.
	Abandon bool
	// Jitter seeds this plan's backoff between acquire attempts.
	Jitter uint64
}

// planner draws plans for one worker.
type planner struct {
	rng *rand.Rand
	w   Workload
}

// newPlanner derives the worker's source from the run's seed and the
// worker's number, so workers differ and each is reproducible alone.
func newPlanner(w Workload, worker int) *planner {
	return &planner{rng: rand.New(rand.NewPCG(uint64(w.Seed), uint64(worker))), w: w}
}

func (p *planner) next() Plan {
	w, r := p.w, p.rng
	// Draw every field, used or not, so that the sequence never shifts.
	key, work := r.IntN(w.Keys), uniform(r, w.WorkMin, w.WorkMax)
	stalls, stall := r.Float64() < w.StallRate, uniform(r, w.TTL*6/5, w.TTL*2)
	stallAt := r.IntN(steps(work, w.TTL))
	abandon := r.Float64() < w.AbandonRate
	plan := Plan{Key: LockKey(key), Work: work, Abandon: abandon, Jitter: r.Uint64()}
	if stalls {
		plan.Stall, plan.StallAt = stall, stallAt
	}
	return plan
}

// LockKey names the i-th lock key, with a hash tag that its fence counter
// shares: lock:{k1}, fence:{k1}.
func LockKey(i int) string { return fmt.Sprintf("lock:{k%d}", i+1) }

// steps is how many TTL/3 steps a hold of work takes (at least one).
func steps(work, ttl time.Duration) int {
	step := max(ttl/3, time.Millisecond)
	return max(1, int((work+step-1)/step))
}

func uniform(r *rand.Rand, lo, hi time.Duration) time.Duration {
	if hi <= lo {
		return lo
	}
	return lo + time.Duration(r.Int64N(int64(hi-lo)))
}

// backoff is the pause before acquire attempt n+1: exponential from min,
// capped at max, jittered to half..full so that workers do not retry in
// lockstep.
func backoff(n int, lo, hi time.Duration, r *rand.Rand) time.Duration {
	d := lo << min(n, 20)
	if d <= 0 || d > hi {
		d = hi
	}
	return d/2 + time.Duration(r.Int64N(int64(d/2)+1))
}
