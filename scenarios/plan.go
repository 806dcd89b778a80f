package scenarios

import (
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"github.com/lockcheck/lockcheck/history"
)

// Plan is what a worker does with one lock. Every choice is drawn up front
// from the worker's seeded source, in the same order whatever the servers
// answer, so one seed gives every worker the same sequence of plans in
// every run; only how often an acquire is retried differs.
//
// The plans are adversarial: they put a holder where a lock client's bugs
// show, at the moments a kind workload never reaches. Holds run from a
// few milliseconds to several extend periods; stalls past the lease come
// mid-work, just before an extend and just before the release; some holds
// extend and release right at the lease's end; and some are frozen inside
// one lock operation (see lockclient.Pause).
type Plan struct {
	Key string
	// Work is how long the holder works, extending every Step.
	Work time.Duration
	// Step is the time between extends: TTL/3, or for a hold that extends
	// and releases at the lease's end, 0.85-0.98 TTL less the write that
	// comes before each extend (Work is then whole steps, so the release
	// comes when an extend would be due): late, but in time for a client
	// that is not frozen.
	Step time.Duration
	// Stall, when not 0, is a pause longer than the TTL without extends (a
	// GC pause, a swapped-out process) at step StallAt, placed at
	// StallWhere: the lease runs out under the holder, whose next write,
	// extend or release comes too late.
	Stall      time.Duration
	StallAt    int
	StallWhere StallWhere
	// StallJust makes the stall end just past the holder's lease, by
	// StallPast (12-18 ms: past the checker's clock tolerance, before most
	// waiting workers' next attempt), whenever it starts, and puts it
	// before an extend: the key is then often free, where a longer stall
	// finds the next holder in it. Half the stalls are of each kind.
	StallJust bool
	StallPast time.Duration
	// StallQuiet, for a stall that ends just past the lease, holds the
	// other workers' acquires of the key back from the stall's start
	// until the holder's next call returned (quietKeys): that call then
	// certainly finds the key free.
	StallQuiet bool
	// Pause, when not 0, freezes the client inside one lock operation for
	// that long: the acquire that takes the lock, extend number PauseAt
	// (from 0), or the release, as PauseIn says. PauseAfter (0-300 µs,
	// within a loopback round trip) is when an external adapter is stopped
	// after the request went out; one that answered by then is not.
	Pause      time.Duration
	PauseIn    history.Kind
	PauseAt    int
	PauseAfter time.Duration
	// PauseSlow, for a pause in the acquire, freezes the client before
	// its command goes out, past the call's deadline (SlowDeadline) by up
	// to TTL/4 more, so within the lease: the call times out while the
	// key may well be someone else's.
	PauseSlow bool
	// LateReply holds back the reply to one lock call of the hold past the
	// call's timeout (LateReplyFor): the acquire's attempts until one
	// takes it, extend number LateAt (from 0), or the release, as LateIn
	// says. The command takes effect; the client times out, as on a slow
	// network, and must tell its caller so (see lockclient.LateReply).
	LateReply bool
	LateIn    history.Kind
	LateAt    int
	// Abandon leaves without releasing, as a crashed holder would; the key
	// must then expire by its TTL.
	Abandon bool
	// Jitter seeds this plan's backoff between acquire attempts.
	Jitter uint64
}

// StallWhere is where in a hold a stall comes.
type StallWhere string

const (
	// StallMidWork replaces a step of work: the holder writes when it wakes.
	StallMidWork StallWhere = "mid-work"
	// StallBeforeExtend comes after a step's write: the holder's first act
	// on waking is an extend of a lease that has ended.
	StallBeforeExtend StallWhere = "before-extend"
	// StallBeforeRelease comes after the last write: the release is late.
	StallBeforeRelease StallWhere = "before-release"
)

var stallPlaces = []StallWhere{StallMidWork, StallBeforeExtend, StallBeforeRelease}

// pausePlaces are where a hold's pause may strike, each entry as often:
// inside the acquire, in the acquire before its command goes out (the
// second entry, Plan.PauseSlow), inside an extend (twice as often: a
// frozen extend shows its bug only when the next holder took the key
// meanwhile), inside the release.
var pausePlaces = []history.Kind{history.Acquire, history.Acquire, history.Extend, history.Extend, history.Release}

// latePlaces are where a hold's late reply may come, each entry as often:
// the acquire (whose command, taken effect, leaves a key its client does
// not know it holds until the TTL), an extend (twice as often), the
// release.
var latePlaces = []history.Kind{history.Acquire, history.Extend, history.Extend, history.Release}

// planner draws plans for one worker.
type planner struct {
	rng *rand.Rand
	// late draws the late replies, from a source of their own: a seed's
	// other choices are the same with late replies on or off.
	late *rand.Rand
	// quiet draws the quiet stalls, from a source of their own too.
	quiet *rand.Rand
	w     Workload
}

// lateStream and quietStream tell the late replies' and the quiet
// stalls' sources from the plans' own.
const (
	lateStream  = 0x1a7e
	quietStream = 0x9e1e
)

// newPlanner derives the worker's source from the run's seed and the
// worker's number, so workers differ and each is reproducible alone.
func newPlanner(w Workload, worker int) *planner {
	return &planner{
		rng:   rand.New(rand.NewPCG(uint64(w.Seed), uint64(worker))),
		late:  rand.New(rand.NewPCG(uint64(w.Seed), uint64(worker)|lateStream<<32)),
		quiet: rand.New(rand.NewPCG(uint64(w.Seed), uint64(worker)|quietStream<<32)),
		w:     w,
	}
}

func (p *planner) next() Plan {
	w, r := p.w, p.rng
	// Draw every field, used or not, so that the sequence never shifts.
	key, work := r.IntN(w.Keys), logUniform(r, w.WorkMin, w.WorkMax)
	late, lateStep := r.Float64() < w.LateRate, max(uniform(r, w.TTL*17/20, w.TTL*49/50)-w.WriteGap, time.Millisecond)
	stalls, stall := r.Float64() < w.StallRate, uniform(r, w.TTL*6/5, w.TTL*2)
	where, stallFrac := stallPlaces[r.IntN(len(stallPlaces))], r.Float64()
	just, past := r.IntN(2) == 0, uniform(r, 12*time.Millisecond, 18*time.Millisecond)
	pauses, pause := r.Float64() < w.PauseRate, uniform(r, w.TTL*6/5, w.TTL*2)
	place, pauseFrac, pauseAfter := r.IntN(len(pausePlaces)), r.Float64(), uniform(r, 0, 300*time.Microsecond)
	pauseIn, slow, slowPause := pausePlaces[place], place == 1, SlowDeadline(w.Scenario)+uniform(r, time.Millisecond, w.TTL/4)
	abandon := r.Float64() < w.AbandonRate
	plan := Plan{Key: LockKey(key), Work: work, Step: w.TTL / 3, Abandon: abandon, Jitter: r.Uint64()}
	if late {
		plan.Step = lateStep
		plan.Work = time.Duration(steps(work, lateStep)) * lateStep
	}
	n := steps(plan.Work, plan.Step)
	if pauses && pauseIn != history.Acquire {
		// a stall before the frozen extend or release would lose the lock
		// first, and the call it freezes would find nothing to freeze: the
		// hold's stall, if any, comes before its release, long
		just, where = false, StallBeforeRelease
	}
	if pauses && pauseIn == history.Release {
		// and before a frozen release no stall may come at all: the
		// release would find the lock gone, and a release that goes
		// astray between its commands (GET, then DEL) would never meet
		// the next holder's lock
		stalls = false
	}
	if stalls && just {
		// a stall that ends just past the lease comes before an extend:
		// the extend finds the key expired, and most often free
		where = StallBeforeExtend
	}
	if stalls && where != StallBeforeRelease {
		// a stall mid-work or before an extend is followed by an extend
		// (the worker does not end its work there, see worker.work), so
		// it comes after the first step, in a hold of two steps at least
		if n < 2 {
			plan.Work = 2 * plan.Step
		}
		plan.Stall, plan.StallAt, plan.StallWhere = stall, 0, where
		plan.StallJust, plan.StallPast = just, past
	} else if stalls {
		plan.Stall, plan.StallAt, plan.StallWhere = stall, int(stallFrac*float64(n)), where
		plan.StallJust, plan.StallPast = just, past
	}
	if pauses {
		plan.Pause, plan.PauseIn, plan.PauseAfter = pause, pauseIn, pauseAfter
		if pauseIn == history.Acquire && slow {
			plan.Pause, plan.PauseSlow = slowPause, true
		}
		if pauseIn == history.Extend {
			if n < 2 { // a one-step hold has no extend: give it one
				plan.Work, n = 2*plan.Step, 2
			}
			plan.PauseAt = int(pauseFrac * float64(n-1))
		}
	}
	p.lateReply(&plan)
	p.quietStall(&plan)
	return plan
}

// quietStall makes the plan's stall quiet (QuietStallRate of the stalls
// that end just past the lease). The draw is made for every plan, so the
// sequence never shifts.
func (p *planner) quietStall(plan *Plan) {
	quiet := p.quiet.Float64() < p.w.QuietStallRate
	plan.StallQuiet = quiet && plan.Stall > 0 && plan.StallJust
}

// lateReply places the plan's late reply, if it has one: in an extend
// only where the hold has one, else in its release.
func (p *planner) lateReply(plan *Plan) {
	r := p.late
	late, in, frac := r.Float64() < p.w.LateReplyRate, latePlaces[r.IntN(len(latePlaces))], r.Float64()
	if !late {
		return
	}
	n := steps(plan.Work, plan.Step)
	if in == history.Extend && n < 2 {
		in = history.Release
	}
	plan.LateReply, plan.LateIn = true, in
	if in == history.Extend {
		plan.LateAt = int(frac * float64(n-1))
	}
}

// LateReplyFor is how long a late reply is held back: past the call's
// deadline (with its WAIT, for an acquire) by a quarter of the call
// timeout, so that the client's timeout fires first on a loaded machine
// too.
func LateReplyFor(s Scenario) time.Duration {
	return s.CallTimeout + s.Wait.Timeout + s.CallTimeout/4
}

// SlowDeadline is the deadline of a call whose acquire freezes before it
// goes out (Plan.PauseSlow): the call timeout, or TTL/4 where that is
// shorter, so that the client wakes to its timeout well within a lease.
func SlowDeadline(s Scenario) time.Duration { return min(s.CallTimeout, s.TTL/4) }

// LockKey names the i-th lock key, with a hash tag that its fence counter
// shares: lock:{k1}, fence:{k1}.
func LockKey(i int) string { return fmt.Sprintf("lock:{k%d}", i+1) }

// steps is how many steps of step a hold of work takes (at least one).
func steps(work, step time.Duration) int {
	step = max(step, time.Millisecond)
	return max(1, int((work+step-1)/step))
}

// logUniform draws from [lo, hi) evenly on a log scale, so that holds of a
// few milliseconds are as common as holds of several extend periods.
func logUniform(r *rand.Rand, lo, hi time.Duration) time.Duration {
	if hi <= lo || lo <= 0 {
		return uniform(r, lo, hi)
	}
	d := time.Duration(float64(lo) * math.Exp(r.Float64()*math.Log(float64(hi)/float64(lo))))
	return min(max(d, lo), hi)
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
