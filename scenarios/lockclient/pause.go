package lockclient

import (
	"context"
	"sync/atomic"
	"time"
)

// Pause is a pause planned inside one lock operation, as a GC pause or a
// frozen process would strike it: between the commands of an operation
// that takes two (compare, then act; set, then expire), or, for an
// operation of one command, after the server answered and before the
// caller hears of it. A client written against commands takes it at its
// mid-operation point; an external adapter is stopped (SIGSTOP) while the
// request is outstanding. The worker carries it in the call's context.
type Pause struct {
	// For is how long the client stays frozen: past the lease.
	For time.Duration
	// After is how long an external adapter runs before it is stopped.
	After time.Duration
	// Before strikes the pause before the command is sent, while the
	// call's deadline runs (the worker takes it): the client wakes to a
	// timeout, as one frozen with its request in flight would. Only a
	// client that takes a timeout for a success is then wrong.
	Before bool
	// Fault marks the pause-client fault's pause: the fault has told the
	// history a holder froze, so if nothing inside the call took it, the
	// worker freezes right after the call.
	Fault bool
	// Wake, when it closes, ends the pause early: the run is over, and a
	// run does not wait out a frozen client to end.
	Wake <-chan struct{}
	// Cut, when it closes, ends the pause early too: a fault's race armed
	// itself, and wants the acquires that are frozen to return now.
	Cut   <-chan struct{}
	taken atomic.Bool
}

// Sleep freezes the caller for the pause, or until Wake closes.
func (p *Pause) Sleep() {
	t := time.NewTimer(p.For)
	defer t.Stop()
	select {
	case <-t.C:
	case <-p.Wake:
	case <-p.Cut:
	}
}

type pauseKey struct{}

// Take takes the pause, once: false when a step inside the call took it.
func (p *Pause) Take() bool { return p.taken.CompareAndSwap(false, true) }

// Taken says whether the pause was taken.
func (p *Pause) Taken() bool { return p.taken.Load() }

// WithPause gives the call p; nil leaves ctx as it is.
func WithPause(ctx context.Context, p *Pause) context.Context {
	if p == nil {
		return ctx
	}
	return context.WithValue(ctx, pauseKey{}, p)
}

// takePause returns the call's pause once: nil when it has none or it
// was taken.
func takePause(ctx context.Context) *Pause {
	p, _ := ctx.Value(pauseKey{}).(*Pause)
	if p == nil || !p.Take() {
		return nil
	}
	return p
}

// pauseInside freezes the calling client for the call's pause, if it has
// one not yet taken, whatever the call's deadline says: a frozen process
// does not notice its deadlines pass. It then calls cfg.MidOp, a script's
// hook at the same point. It returns a context for the operation's next
// command with a deadline of its own, as a client that woke up would set.
func pauseInside(ctx context.Context, cfg Config, key string) (context.Context, context.CancelFunc) {
	if p := takePause(ctx); p != nil {
		p.Sleep()
	}
	if cfg.MidOp != nil {
		cfg.MidOp(ctx, key)
	}
	return WithTimeout(context.WithoutCancel(ctx), cfg.Timeout)
}
