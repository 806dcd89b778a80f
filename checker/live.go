package checker

import (
	"context"
	"fmt"
	"time"

	"github.com/lockcheck/lockcheck/history"
)

// LiveCount counts what the interval checks (double holders, fences, the
// resource; no linearizability search) find as a run goes. Each update
// takes only the operations recorded since the last and re-checks a
// window of the recent ones, long enough to hold any lease that can still
// overlap a new one: its cost grows with the window, not with the run.
// The window also stops at the recorder's ring (history.TailOps): at full
// speed that is a second or two of operations, and a live count that
// copied ten seconds of them grew the run's memory by the hundreds of MiB.
// A finding counts only once it happened before the recorder's settled
// instant (history.Recorder.Settled, liveAt): a release still in flight
// leaves its hold open in the window, and the next holder's acquire, or
// its write, would look like a double holder or a write over a holder
// until the release is recorded. Findings are
// counted once, by kind, key and start; findings the run's
// options allow (a fenced client's double holders: OptionsFor,
// which also reads the acquires' fences) are not counted. It is
// a live indicator and the trigger of --stop-on-violation; the verdict is
// the whole history's check at the end.
type LiveCount struct {
	rec    *history.Recorder
	fenced bool
	span   int64
	next   int
	window []history.Op
	seen   map[string]bool
}

func NewLiveCount(rec *history.Recorder, ttl time.Duration, fenced bool) *LiveCount {
	return &LiveCount{rec: rec, fenced: fenced, span: int64(max(4*ttl, 10*time.Second)), seen: map[string]bool{}}
}

// liveChecks are the checks the live count adds up. The resource's lost
// increments are not among them: one that two holders at once made is a
// double holder already, and one that a holder made after its lease ended
// is a stale write, which the default gate allows an unfenced client.
var liveChecks = []string{DoubleHolder, Fence}

// liveAt is when a finding happened, for the settled rule: a double
// holder at the start of its overlap; a fence finding at its end, since
// it starts where the stale hold began, long before the write that makes
// it a finding (and maybe before the release still in flight).
func liveAt(f Finding) int64 {
	if f.Kind == KindDoubleHolder {
		return f.Start
	}
	return max(f.Start, f.End)
}

// Pull adds the operations recorded since the last pull to the window:
// call it at least every second, since the recorder keeps only its latest
// operations.
// A streaming recorder keeps only its latest ones (history.TailOps): if
// more were recorded since, the window lost its continuity and starts
// again from what is left, as the window's own trimming does.
func (l *LiveCount) Pull() {
	ops, next := l.rec.Since(l.next)
	if len(ops) < next-l.next {
		l.window = l.window[:0]
	}
	l.next = next
	l.window = append(l.window, ops...)
	if over := len(l.window) - history.TailOps; over > 0 {
		l.window = append(l.window[:0], l.window[over:]...)
	}
}

// Update checks the recent window and returns the violations counted so
// far.
func (l *LiveCount) Update(ctx context.Context) int {
	settled := l.rec.Settled() // before the pull: what began before it is in the pull
	l.Pull()
	// Operations are recorded as they return: the old ones are a prefix.
	cut, drop := l.rec.Now()-l.span, 0
	for drop < len(l.window) && l.window[drop].Return < cut {
		drop++
	}
	if drop > 0 {
		l.window = append([]history.Op(nil), l.window[drop:]...)
	}
	if len(l.window) == 0 {
		return len(l.seen)
	}
	h := &history.History{Ops: l.window, Faults: l.rec.Faults(), Meta: history.Meta{Fenced: l.fenced}}
	opts := OptionsFor(h)
	opts.Skip = []string{Linearizability}
	opts.MaxFindings = 1 << 20
	res, err := Run(ctx, h, opts)
	if err != nil {
		return len(l.seen)
	}
	for _, name := range liveChecks {
		c, _ := res.Check(name)
		for _, f := range c.Findings {
			if f.Allowed || liveAt(f) >= settled {
				continue
			}
			l.seen[fmt.Sprintf("%s %s %d", f.Kind, f.Key, f.Start)] = true
		}
	}
	return len(l.seen)
}

// StopOnViolation calls stop once the live count finds a violation,
// checking every 2 s: the trigger of --stop-on-violation. It returns the
// function that ends the watch.
func StopOnViolation(ctx context.Context, rec *history.Recorder, ttl time.Duration, fenced bool, stop func(n int)) func() {
	done := make(chan struct{})
	stopped := make(chan struct{})
	live := NewLiveCount(rec, ttl, fenced)
	go func() {
		defer close(stopped)
		tick := time.NewTicker(2 * time.Second)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			if n := live.Update(ctx); n > 0 {
				stop(n)
				return
			}
		}
	}()
	return func() { close(done); <-stopped }
}
