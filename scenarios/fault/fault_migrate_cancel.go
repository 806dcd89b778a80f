package fault

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/lockcheck/lockcheck/scenarios/internal/pace"
	"github.com/lockcheck/lockcheck/topology"
)

// CancelMigration starts moving the lock key's slot and cancels the move
// midway: the slot must stay with its source, with every key the clients
// wrote meanwhile. An atomic migration of a few keys ends in tens of
// milliseconds, so to be cancelled midway its target first drops the
// source's packets (shorter than failure detection needs, and one node's
// report is not a majority), and the cut heals after the cancel. Without
// an atomic method the legacy migration begins, moves the keys there are
// (half a lease's worth of ASK redirects) and is rolled back. A migration
// that ended before its cancel is the window's unmet; a slot that left
// its source anyway is the fault's error.
var CancelMigration Fault = cancelMigration{faultBase{"cancel-migration", clusterOnly, "starts moving the lock key's slot and cancels midway: atomic (the target drops the source's packets meanwhile, so it cannot end first; cancelled after 500 ms), else legacy rolled back after TTL/2; the slot must stay with its source (SlotOwner)"}}

type cancelMigration struct{ faultBase }

// cancelAfter is how long an atomic migration runs, stalled, before its
// cancel: well under the cluster's failure detection.
const cancelAfter = 500 * time.Millisecond

func (f cancelMigration) Inject(ctx context.Context, env Env) error {
	mv, err := planBestMove(ctx, env, f.name)
	if err != nil {
		return err
	}
	win, end := env.openWindow(f.name, mv.from, mv.String())
	defer end()
	var what string
	var ended bool
	if mv.method == topology.MigrateLegacy {
		what, err = legacyRolledBack(ctx, env, mv, env.TTL/2)
	} else {
		what, ended, err = atomicCancelled(ctx, env, mv)
	}
	if err == nil {
		err = env.Topo.AwaitSlotOwner(ctx, mv.slot, mv.slot, mv.from, 10*time.Second)
		if err != nil {
			err = fmt.Errorf("%s: slot %d did not stay with %s after the cancel: %w", f.name, mv.slot, mv.from.Name, err)
		}
	}
	if err == nil {
		what += "; the slot stays with " + mv.from.Name
	} else {
		what += "; " + err.Error()
	}
	env.Rec.FaultTarget(win, mv.from.Name, mv.String()+": "+what)
	if ended && ctx.Err() == nil {
		env.unmet(win, "%s ended before its cancel: %s", mv, what)
	}
	return err
}

// atomicCancelled starts an atomic migration of mv's slot with the target
// cut off from the source, cancels it after cancelAfter, waits for the
// cancel to take and heals the cut. ended says the migration had ended
// before the cancel.
func atomicCancelled(ctx context.Context, env Env, mv slotMove) (what string, ended bool, err error) {
	if err := mv.to.Cut(ctx, mv.from); err != nil {
		return "", false, fmt.Errorf("cut %s off from %s: %w", mv.to.Name, mv.from.Name, err)
	}
	defer func() {
		cctx, cancel := cleanup(ctx)
		defer cancel()
		err = errors.Join(err, mv.to.Heal(cctx))
	}()
	m, err := env.Topo.MigrateSlots(ctx, mv.method, mv.from, mv.to, mv.slot, mv.slot, topology.MigrateOptions{})
	if err != nil {
		return "failed to start", false, err
	}
	pace.Hold(ctx, cancelAfter)
	st, err := m.Status(ctx)
	if err == nil && st.Done() {
		return "ended before the cancel: " + st.String(), true, nil
	}
	cancelled := cancelMove(ctx, m)
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	st, err = m.Wait(wctx)
	if err != nil {
		return cancelled, false, err
	}
	return fmt.Sprintf("%s after %s with %s cut off from %s; ended %s", cancelled, cancelAfter, mv.to.Name, mv.from.Name, st), false, nil
}

// legacyRolledBack begins a legacy migration of mv's slot, moves its keys,
// holds until open has passed since the beginning and rolls it back.
func legacyRolledBack(ctx context.Context, env Env, mv slotMove, open time.Duration) (string, error) {
	begin := time.Now()
	l, err := env.Topo.BeginLegacyMigration(ctx, mv.from, mv.to, mv.slot, mv.slot, topology.MigrateOptions{KeyPause: open / 4})
	if err != nil {
		return "failed to begin", err
	}
	moved := "keys moved"
	if err := l.MoveKeys(ctx); err != nil {
		moved = "moving keys failed: " + err.Error()
	}
	pace.Hold(ctx, open-time.Since(begin))
	keys := l.Status().Keys
	back, err := rollBack(ctx, l)
	return fmt.Sprintf("began, %s (%d), %s after %s", moved, keys, back, time.Since(begin).Round(time.Millisecond)), err
}
