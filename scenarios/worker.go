package scenarios

import (
	"context"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/lockcheck/lockcheck/history"
	"github.com/lockcheck/lockcheck/scenarios/internal/pace"
	"github.com/lockcheck/lockcheck/scenarios/lockclient"
)

// worker is one logical client's loop: pick a key, acquire, work while
// writing and extending, release. It records every call as the client
// reported it and never second-guesses a client: a buggy client's lies go
// into the history as told, for the checker to catch.
type worker struct {
	id     int
	client lockclient.Client
	// late holds back the replies on the client's connections that the
	// plan makes late; nil for an external adapter (its tap does it).
	late *lockclient.LateReply
	// cid is the porcupine client id; it changes after every Unknown.
	cid   int
	w     Workload
	res   *Resource
	cnt   *counters
	plans *planner
	// obs reads the key after every OK acquire and extend, as client ocid;
	// nil when the run observes nothing.
	obs  *observer
	ocid int
	// quiet holds the other workers back during a quiet stall; quietEnd
	// ends this worker's, once its next call returned.
	quiet    *quietKeys
	quietEnd func()
	// plan is the hold being carried out, extends how many extends it
	// has made: they say which call the plan's pause goes into.
	plan    Plan
	extends int
	// leaseAt is when the call that set the worker's lease (its last OK
	// acquire or extend) returned: the server set the lease by then, so
	// it has certainly ended TTL after it, on the server and by the
	// checker's latest bound (return + TTL) alike, however long the call
	// took on a loaded machine.
	leaseAt time.Time
	// woke says the last call was frozen inside (its pause taken): a
	// fenced holder writes as soon as it is back, as after a stall.
	woke bool
	// done closes when the run ends: a client frozen inside a call wakes
	// then, so the run does not wait out its pause.
	done <-chan struct{}
}

func (wk *worker) run(ctx context.Context) {
	for ctx.Err() == nil {
		wk.hold(ctx, wk.plans.next())
	}
}

// hold carries out one plan.
func (wk *worker) hold(ctx context.Context, p Plan) {
	wk.plan, wk.extends = p, 0
	defer wk.endQuiet()
	held, ok := wk.acquire(ctx, p)
	if !ok {
		return
	}
	if !wk.work(ctx, p, held) {
		return
	}
	if p.Abandon && ctx.Err() == nil {
		wk.cnt.abandoned.Add(1)
		return
	}
	r := wk.call(history.Release, p.Key, held.Token, 0, func(c context.Context) lockclient.Result {
		return wk.client.Release(c, p.Key, held.Token)
	})
	switch r.Outcome {
	case history.OK:
		wk.cnt.released.Add(1)
	case history.Fail:
		wk.cnt.lostOnRelease.Add(1)
		wk.w.Log.Warn("lost lock: release found it gone", "worker", wk.id, "key", p.Key, "token", held.Token, "error", r.Err)
	}
}

// acquire retries with jittered backoff until it holds the lock or the run
// ends. Each attempt first passes kill-primary's gate (shut only while that
// fault waits for the key to be free everywhere).
func (wk *worker) acquire(ctx context.Context, p Plan) (lockclient.Result, bool) {
	jitter := rand.New(rand.NewPCG(p.Jitter, 0))
	for n := 0; wk.w.Gate.Pass(ctx) && wk.quiet.wait(ctx, p.Key); n++ {
		r := wk.call(history.Acquire, p.Key, "", wk.w.TTL, func(c context.Context) lockclient.Result {
			return wk.client.Acquire(c, p.Key, wk.w.TTL)
		})
		if r.Outcome == history.OK {
			wk.cnt.acquired.Add(1)
			wk.w.Freezer.Landed(wk.id)
			return r, true
		}
		if r.Outcome == history.Fail {
			wk.cnt.acquireFailed.Add(1)
		}
		pace.Sleep(ctx, backoff(n, wk.w.BackoffMin, wk.w.BackoffMax, jitter))
	}
	return lockclient.Result{}, false
}

// work sleeps in steps of p.Step and extends between steps. Unfenced, it
// writes after every step, so that overlapping holders lose increments.
// Fenced, it writes once, when the work is done or right after a stall (the
// paused client that wakes up and writes, in Kleppmann's picture): the
// resource takes a fence only when it is strictly greater than the last,
// so a second write with the same fence would be refused. A stall comes
// where the plan puts it: instead of a step, after a step's write and
// before its extend, or after the last write and before the release. It
// returns whether the lock should be released: not after a nil extend,
// which says it is someone else's now.
func (wk *worker) work(ctx context.Context, p Plan, held lockclient.Result) bool {
	end := time.Now().Add(p.Work)
	fenced := wk.res.Fenced()
	for i := 0; ; i++ {
		if fenced && wk.woke && !wk.write(p.Key, held) {
			return wk.stallBefore(ctx, p, i, StallBeforeRelease)
		}
		wk.woke = false
		d := min(p.Step, time.Until(end))
		stalled := p.Stall > 0 && i == p.StallAt && p.StallWhere == StallMidWork
		if stalled {
			d = wk.stallFor(p)
		}
		if f := wk.w.Freezer.Take(wk.id); f > 0 {
			d, stalled = f, true
		}
		if stalled {
			wk.cnt.stalls.Add(1)
			if !pace.Sleep(ctx, d) {
				return true
			}
		} else if !wk.step(ctx, d, &end) {
			return true
		}
		// a stall mid-work or before an extend is followed by the
		// extend, however long the stall took: a holder wakes and goes on
		last := !time.Now().Before(end) && !(p.Stall > 0 && i == p.StallAt && p.StallWhere != StallBeforeRelease)
		if !fenced || last || stalled {
			if !wk.write(p.Key, held) || fenced {
				return wk.stallBefore(ctx, p, i, StallBeforeRelease)
			}
		}
		if last {
			return wk.stallBefore(ctx, p, i, StallBeforeRelease)
		}
		if !wk.stallBefore(ctx, p, i, StallBeforeExtend) {
			return true
		}
		r := wk.call(history.Extend, p.Key, held.Token, wk.w.TTL, func(c context.Context) lockclient.Result {
			return wk.client.Extend(c, p.Key, held.Token, wk.w.TTL)
		})
		wk.extends++
		switch r.Outcome {
		case history.OK:
			wk.cnt.extended.Add(1)
		case history.Fail:
			wk.cnt.lostOnExtend.Add(1)
			wk.w.Log.Warn("lost lock: extend refused", "worker", wk.id, "key", p.Key, "token", held.Token, "error", r.Err)
			return false
		default:
			return true // unsure: release in case it is still ours
		}
	}
}

// step is one step of work, d long, unless kill-primary's gate shuts
// meanwhile or is shut: the holder then ends its work now (end becomes
// now), as one whose work took less time, so that the fault need not wait
// out the rest of the hold for the key to be free. A stall is never
// hurried: a stalled client is not running. It says whether the run goes
// on.
func (wk *worker) step(ctx context.Context, d time.Duration, end *time.Time) bool {
	hurry := wk.w.Gate.Hurry()
	if !pace.SleepOr(ctx, d, hurry) {
		return false
	}
	select {
	case <-hurry:
		*end = time.Now()
	default:
	}
	return true
}

// stallBefore stalls at step i when the plan puts its stall there, or at
// the release when the plan's stall before an extend fell on the last
// step, which has no extend. A stall before the release comes at the
// release, whichever step the work ended at (the steps' writes make the
// work end sooner than its step count says). It says whether the run goes
// on.
func (wk *worker) stallBefore(ctx context.Context, p Plan, i int, where StallWhere) bool {
	atRelease := where == StallBeforeRelease && p.StallWhere == StallBeforeRelease
	due := p.Stall > 0 && (atRelease || i == p.StallAt && (p.StallWhere == where ||
		(where == StallBeforeRelease && p.StallWhere == StallBeforeExtend)))
	if !due {
		return ctx.Err() == nil
	}
	wk.cnt.stalls.Add(1)
	d := wk.stallFor(p)
	wk.startQuiet(p, d)
	return pace.Sleep(ctx, d)
}

// startQuiet holds the other workers' acquires of the key back for a
// quiet stall of d (Plan.StallQuiet), until this worker's next call
// returned, at most d and that call's longest wait after it; none while
// a fault's race wants the workload's own timing.
func (wk *worker) startQuiet(p Plan, d time.Duration) {
	if !p.StallQuiet || wk.quiet == nil || wk.w.Freezer.Racing() {
		return
	}
	wk.endQuiet()
	wk.quietEnd = wk.quiet.hold(p.Key, d+LateReplyFor(wk.w.Scenario)+wk.w.CallTimeout)
	wk.cnt.quietStalls.Add(1)
}

// endQuiet ends this worker's quiet stall, if it has one.
func (wk *worker) endQuiet() {
	if wk.quietEnd != nil {
		wk.quietEnd()
		wk.quietEnd = nil
	}
}

// stallFor is how long the plan's stall lasts from now: its own length,
// or until just past the lease when it is to end there: StallPast after
// the lease has certainly ended.
func (wk *worker) stallFor(p Plan) time.Duration {
	if !p.StallJust {
		return p.Stall
	}
	return max(time.Until(wk.leaseAt.Add(wk.w.TTL)), 0) + p.StallPast
}

// write sends one write to the resource and says whether it was accepted;
// a rejected write means a newer holder wrote, so the work stops.
func (wk *worker) write(key string, held lockclient.Result) bool {
	wk.w.Freezer.Wait(wk.id, wk.done)
	okWrite := wk.res.Write(Write{Client: wk.cid, Worker: wk.id, Key: key, Token: held.Token, Fence: held.Fence, HasFence: held.HasFence})
	wk.cnt.writes.Add(1)
	wk.cnt.ops.Add(1)
	if !okWrite {
		wk.cnt.writesRejected.Add(1)
	}
	return okWrite
}

// call runs one lock call and records it. Calls are not cut short when
// the run ends (each has the client's own deadline), so that stopping
// leaves no spurious Unknowns.
func (wk *worker) call(kind history.Kind, key, token string, ttl time.Duration, f func(context.Context) lockclient.Result) lockclient.Result {
	rec := wk.w.Recorder
	wk.w.Freezer.Wait(wk.id, wk.done) // a fault's race holds this holder here
	pause := wk.pauseFor(kind)
	hold := wk.holdFor(kind, key, pause)
	call := rec.Begin(wk.cid)
	ctx, cancel := wk.slow(pause)
	wk.late.Arm(hold)
	r := f(lockclient.WithHold(lockclient.WithPause(ctx, pause), hold))
	wk.late.Disarm()
	cancel()
	if hold.Taken() {
		wk.cnt.lateReplies.Add(1)
		wk.plan.LateReply = false // taken: the later calls of this hold are answered in time
	}
	if r.Outcome == history.OK && kind != history.Release {
		wk.leaseAt = time.Now()
	}
	ret := rec.Now()
	if pause != nil && pause.Fault && pause.Take() {
		pause.Sleep() // frozen right after the call instead
	}
	wk.woke = pause != nil && pause.Taken()
	if wk.woke {
		wk.cnt.pauses.Add(1)
		wk.plan.Pause = 0 // taken: the later calls of this hold run free
	}
	wk.endQuiet() // a quiet stall lasts until the stalled holder's next call returned
	op := lockOp(wk.cid, wk.id, kind, key, token, ttl, r, call, ret)
	if r.Undo != nil {
		wk.recordUndo(op, r)
		return r
	}
	rec.Add(op)
	wk.cnt.ops.Add(1)
	if r.Outcome == history.Unknown {
		wk.cnt.unknown.Add(1)
		wk.cid = rec.NewClient()
	}
	if r.Outcome == history.OK && wk.obs != nil {
		wk.obs.read(wk.ocid, key)
	}
	return r
}

// slow takes a pause that strikes before the command goes out: the
// call's deadline is set, the client freezes past it, and the call then
// starts with its deadline gone, as a client frozen with its request in
// flight wakes to a timeout. Its context is the call's.
func (wk *worker) slow(p *lockclient.Pause) (context.Context, context.CancelFunc) {
	if p == nil || !p.Before || !p.Take() {
		return context.Background(), func() {}
	}
	ctx, cancel := lockclient.WithTimeout(context.Background(), SlowDeadline(wk.w.Scenario))
	p.Sleep()
	return ctx, cancel
}

// pauseFor is the pause the plan puts into this call, if any: the
// acquire's attempts until one takes the lock with it, the plan's extend,
// or the release. A holder's extend or release also takes the pause-client
// fault's pending pause, if it asks before a holder between two steps of
// work does: the fault freezes a holder inside a lock call as well.
func (wk *worker) pauseFor(kind history.Kind) *lockclient.Pause {
	p := wk.plan
	if kind == history.Acquire && wk.w.Freezer.Racing() {
		return nil // a fault's race wants its acquires to return as the server answers
	}
	if p.Pause > 0 && p.PauseIn == kind && (kind != history.Extend || wk.extends == p.PauseAt) {
		// an adapter's deadline is the harness's, not its library's: it is
		// frozen inside the call instead
		before := p.PauseSlow && !strings.HasPrefix(wk.w.Client, lockclient.ExternalPrefix)
		pause := &lockclient.Pause{For: p.Pause, After: p.PauseAfter, Before: before, Wake: wk.done}
		if kind == history.Acquire {
			pause.Cut = wk.w.Freezer.Armed()
		}
		return pause
	}
	if kind != history.Acquire {
		if f := wk.w.Freezer.Take(wk.id); f > 0 {
			return &lockclient.Pause{For: f, Fault: true, Wake: wk.done}
		}
	}
	return nil
}

// holdFor is the late reply the plan puts into this call, if any: the
// acquire's attempts until one's reply is held back, the plan's extend, or
// the release. A call the plan also freezes gets none: its reply waits
// for it anyway.
func (wk *worker) holdFor(kind history.Kind, key string, pause *lockclient.Pause) *lockclient.Hold {
	p := wk.plan
	if !p.LateReply || p.LateIn != kind || pause != nil || kind == history.Extend && wk.extends != p.LateAt {
		return nil
	}
	if wk.w.Freezer.Racing() {
		return nil // a fault's race wants its calls answered as the server answers
	}
	return &lockclient.Hold{Key: key, For: LateReplyFor(wk.w.Scenario), Wake: wk.done}
}

// lockOp is the history's record of one lock call as the client reported
// it: an acquire that may have taken the lock carries its token and fence.
func lockOp(cid, worker int, kind history.Kind, key, token string, ttl time.Duration, r lockclient.Result, call, ret int64) history.Op {
	op := history.Op{Client: cid, Worker: worker, Key: key, Kind: kind, Token: token, TTLms: ttl.Milliseconds(),
		Outcome: r.Outcome, Error: r.Err, Call: call, Return: ret}
	if kind == history.Acquire && r.Outcome != history.Fail {
		op.Token, op.Fence, op.HasFence = r.Token, r.Fence, r.HasFence
	}
	return op
}

// recordUndo records an acquire that gave the lock back before it
// returned as what happened: an acquire that held (or, Unsure, may have
// held) until the release's call, then that release.
func (wk *worker) recordUndo(acq history.Op, r lockclient.Result) {
	rec, u := wk.w.Recorder, r.Undo
	acq.Outcome, acq.Error, acq.Return = history.OK, "", u.Call
	acq.Token, acq.Fence, acq.HasFence = r.Token, r.Fence, r.HasFence
	if u.Unsure {
		acq.Outcome, acq.Error = history.Unknown, r.Err
	}
	rec.Add(acq)
	if u.Unsure {
		wk.cnt.unknown.Add(1)
		wk.cid = rec.NewClient()
	}
	rel := history.Op{Client: wk.cid, Worker: wk.id, Key: acq.Key, Kind: history.Release, Token: r.Token,
		Outcome: u.Release.Outcome, Error: u.Release.Err, Call: u.Call, Return: u.Return}
	rec.Add(rel)
	wk.cnt.ops.Add(2)
	if u.Release.Outcome == history.Unknown {
		wk.cnt.unknown.Add(1)
		wk.cid = rec.NewClient()
	}
}
