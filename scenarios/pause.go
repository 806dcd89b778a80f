package scenarios

import (
	"context"
	"sync/atomic"
	"time"
)

// opPause is a pause planned inside one lock operation, as a GC pause or a
// frozen process would strike it: between the commands of an operation
// that takes two (compare, then act; set, then expire), or, for an
// operation of one command, after the server answered and before the
// caller hears of it. A client written against commands takes it at its
// mid-operation point; an external adapter is stopped (SIGSTOP) while the
// request is outstanding. The worker carries it in the call's context.
type opPause struct {
	// For is how long the client stays frozen: past the lease.
	For time.Duration
	// After is how long an external adapter runs before it is stopped.
	After time.Duration
	// Fault marks the pause-client fault's pause: the fault has told the
	// history a holder froze, so if nothing inside the call took it, the
	// worker freezes right after the call.
	Fault bool
	taken atomic.Bool
}

type opPauseKey struct{}

// withOpPause gives the call p; nil leaves ctx as it is.
func withOpPause(ctx context.Context, p *opPause) context.Context {
	if p == nil {
		return ctx
	}
	return context.WithValue(ctx, opPauseKey{}, p)
}

// takeOpPause returns the call's pause once: nil when it has none or it
// was taken.
func takeOpPause(ctx context.Context) *opPause {
	p, _ := ctx.Value(opPauseKey{}).(*opPause)
	if p == nil || !p.taken.CompareAndSwap(false, true) {
		return nil
	}
	return p
}

// pauseInside freezes the calling client for the call's pause, if it has
// one not yet taken, whatever the call's deadline says: a frozen process
// does not notice its deadlines pass. It then calls cfg.MidOp, a script's
// hook at the same point. It returns a context for the operation's next
// command with a deadline of its own, as a client that woke up would set.
func pauseInside(ctx context.Context, cfg ClientConfig, key string) (context.Context, context.CancelFunc) {
	if p := takeOpPause(ctx); p != nil {
		time.Sleep(p.For)
	}
	if cfg.MidOp != nil {
		cfg.MidOp(ctx, key)
	}
	return withTimeout(context.WithoutCancel(ctx), cfg.Timeout)
}
