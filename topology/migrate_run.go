package topology

import (
	"context"
	"errors"
	"fmt"
)

// legacyRun is a legacy migration MigrateSlots started: its phases after
// Begin run in the background until they end or Cancel stops them.
type legacyRun struct {
	l      *LegacyMigration
	stop   context.CancelFunc
	done   chan struct{}
	failed error
}

func (t *Topology) startLegacy(ctx context.Context, from, to *Node, first, last int, opts MigrateOptions) (*legacyRun, error) {
	l, err := t.BeginLegacyMigration(ctx, from, to, first, last, opts)
	if err != nil {
		return nil, err
	}
	// the migration outlives the call that started it; Cancel ends it
	bg, stop := context.WithCancel(context.WithoutCancel(ctx))
	r := &legacyRun{l: l, stop: stop, done: make(chan struct{})}
	go func() {
		defer close(r.done)
		err := l.MoveKeys(bg)
		if err == nil {
			err = l.Finish(bg)
		}
		r.failed = err
	}()
	return r, nil
}

// status is the migration's phase; a phase that failed ends it as failed,
// unless Cancel stopped it.
func (r *legacyRun) status(context.Context) (MigrationStatus, error) {
	st := r.l.Status()
	select {
	case <-r.done:
		// a failure Cancel caused is not the migration's: Rollback ends it
		if r.failed != nil && st.State == MigrationRunning && !errors.Is(r.failed, context.Canceled) {
			st.State, st.Message = MigrationFailed, r.failed.Error()
		}
	default:
	}
	return st, nil
}

// cancel stops the background phases, waits for them (bounded by ctx),
// and rolls the migration back.
func (r *legacyRun) cancel(ctx context.Context) error {
	if st := r.l.Status(); st.Done() {
		return fmt.Errorf("it has ended: %s", st)
	}
	r.stop()
	select {
	case <-r.done:
	case <-ctx.Done():
		return fmt.Errorf("the key moves did not stop: %w", ctx.Err())
	}
	if st := r.l.Status(); st.State == MigrationSucceeded {
		return fmt.Errorf("it finished before it stopped")
	}
	return r.l.Rollback(ctx)
}
