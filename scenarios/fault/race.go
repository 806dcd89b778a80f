package fault

import (
	"context"
	"fmt"
	"time"

	"github.com/lockcheck/lockcheck/history"
	"github.com/lockcheck/lockcheck/scenarios/internal/pace"
)

// race drives a double holder on purpose, where a fault makes one
// possible (a failover that loses the lock, a clock that ends its lease
// early): it holds the first holder of the lock before its next call or
// write, lets the fault strike, and lets the holder go once a second
// worker has taken the same lock, or once the first holder's lease has
// ended. Left to the machine's timing, the first holder's next extend
// often comes before the second acquire (a failover takes a second or
// two, retries back off), and the race shows in some runs only. A held
// holder is a holder whose work between two calls took longer, as any
// may: what it believes is what the history records.
//
// A race needs a workload (its Freezer); a script drives its steps
// itself and has none.
type race struct {
	env Env
	// first is the first holder's acquire, once caught.
	first  history.Op
	caught bool
}

// HandsLockTwice says whether fault name hands a held lock to a second
// client by design (its race): under it, any lock on one primary at a time
// has a double holder, and only a fence stops the stale holder's write.
func HandsLockTwice(name string) bool {
	return name == KillPrimary.Name() || name == ClockJump.Name() || name == RestartPrimary.Name()
}

// MayHandLockTwice says whether fault name can hand a held lock to a
// second client, by design or by the luck of its timing: the faults that
// do it by design, and partition-primary, whose split brain promotes a
// replica cut off from the locks taken on the isolated primary, which
// drops them when it rejoins. Under it an unfenced lock cannot keep
// mutual exclusion either; it is only not driven to.
func MayHandLockTwice(name string) bool {
	return HandsLockTwice(name) || name == PartitionPrimary.Name()
}

// overlapFor is how long the first holder stays held after the second
// worker's acquire returned: well past the checker's clock tolerance, so
// the overlap is a finding and not a rounding.
const overlapFor = 200 * time.Millisecond

// newRace arms the hold of the next holder, or returns nil without a
// workload's Freezer.
func newRace(env Env) *race {
	if env.Freezer == nil {
		return nil
	}
	env.Freezer.arm()
	return &race{env: env}
}

// catch waits up to limit for the next acquire to land with half its
// lease or more ahead, and keeps its holder held when accept takes it;
// else it lets the holder go and waits for the next, while limit lasts.
func (r *race) catch(ctx context.Context, accept func(op history.Op) bool, limit time.Duration) bool {
	deadline := time.Now().Add(limit)
	for {
		w, ok := r.env.Freezer.awaitLanded(ctx, time.Until(deadline))
		if !ok {
			return false
		}
		op, found := lastAcquire(r.env.Rec, w)
		// An acquire that was frozen in its call (and woken by the
		// arming) may return with most of its lease gone: its holder
		// would believe for too short a while to race.
		fresh := found && op.Call+r.env.TTL.Nanoseconds()/2 > r.env.Rec.Now()
		if fresh && accept(op) {
			r.first, r.caught = op, true
			return true
		}
		r.env.Freezer.release(w)
		if time.Now().After(deadline) || ctx.Err() != nil {
			return false
		}
		r.env.Freezer.arm()
	}
}

// second waits, until the first holder's lease ends, for another
// worker's acquire of the same lock to return OK (or finds it made), holds the first holder
// overlapFor longer and lets it go. It returns how long the wait lasted,
// and whether the second acquire came.
func (r *race) second(ctx context.Context) (time.Duration, bool) {
	rec, first := r.env.Rec, r.first
	from := rec.Now()
	leaseEnd := first.Call + r.env.TTL.Nanoseconds()
	// from the start of the record: a fault that took long to strike (a
	// restart) may find the second acquire already made
	idx := 0
	found := pace.Poll(ctx, time.Duration(leaseEnd-from), 2*time.Millisecond, func() bool {
		var ops []history.Op
		ops, idx = rec.Since(idx)
		for _, op := range ops {
			if op.Kind == history.Acquire && op.Outcome == history.OK && op.Key == first.Key && op.Worker != first.Worker && op.Return > first.Return {
				return true
			}
		}
		return false
	}) == nil
	waited := time.Duration(rec.Now() - from)
	if found {
		pace.Hold(ctx, overlapFor)
	}
	r.done()
	return waited, found
}

// done lets the first holder go and disarms a hold not taken.
func (r *race) done() {
	if r == nil {
		return
	}
	r.env.Freezer.disarm()
	if r.caught {
		r.env.Freezer.release(r.first.Worker)
	}
}

// lastAcquire is worker's latest OK acquire in rec.
func lastAcquire(rec *history.Recorder, worker int) (history.Op, bool) {
	ops, _ := rec.Since(0)
	for i := len(ops) - 1; i >= 0; i-- {
		if op := ops[i]; op.Worker == worker && op.Kind == history.Acquire && op.Outcome == history.OK {
			return op, true
		}
	}
	return history.Op{}, false
}

// unmet records in fault window win that the fault could not make its
// moment, and why: the run's verdict then says the race was not
// reproduced, instead of safe.
func (e Env) unmet(win int, format string, args ...any) {
	why := fmt.Sprintf(format, args...)
	e.Rec.FaultUnmet(win, why)
	e.Log.Warn("fault could not make its moment", "why", why)
}
