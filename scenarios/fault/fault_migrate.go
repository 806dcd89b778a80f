package fault

import (
	"context"
	"fmt"
	"time"

	"github.com/lockcheck/lockcheck/scenarios/internal/pace"
	"github.com/lockcheck/lockcheck/topology"
)

// MigrateSlot moves the lock key's slot, with the lock and its fence in
// it, to another primary while clients use them: a resharding an
// operator starts. It takes the best method the build has (Valkey's
// atomic migration, then Redis's, then the legacy one, as the servers
// answer MigrationSupport), and waits for the end within a bound: a
// migration that fails or does not end within it is the window's unmet,
// since the run then did not see the slot move. One that did not end is
// cancelled, so the slot has one owner when the fault returns.
var MigrateSlot Fault = migrateSlot{faultBase{"migrate-slot", clusterOnly, "moves the lock key's slot from its primary to another by the best method the build has (Valkey atomic, Redis atomic, else legacy) and waits for the end (at most 30 s + TTL, else cancelled); a move that fails or does not end is the window's unmet"}}

type migrateSlot struct{ faultBase }

func (f migrateSlot) Inject(ctx context.Context, env Env) error {
	mv, err := planBestMove(ctx, env, f.name)
	if err != nil {
		return err
	}
	win, end := env.openWindow(f.name, mv.from, mv.String())
	defer end()
	bound := moveBound(env.TTL)
	what, moved, err := migrateAndWait(ctx, env, mv, mv.slot, mv.slot, bound)
	recordMove(ctx, env, win, mv, what, moved)
	return err
}

// MigrateSlotLegacy moves the lock key's slot key by key (SETSLOT
// IMPORTING and MIGRATING, MIGRATE, SETSLOT NODE), slowly on purpose: a
// pause of half a lease after each key moved, and the slot handed over
// no sooner than a lease after the migration began, so that for a lease
// or more clients meet ASK (the lock moved, its fence not yet) and
// TRYAGAIN (a transaction over both, split), and a lock taken on one
// side is extended or released across the redirect. A phase that fails
// is rolled back, and is the window's unmet.
var MigrateSlotLegacy Fault = migrateSlotLegacy{faultBase{"migrate-slot-legacy", clusterOnly, "moves the lock key's slot to another primary key by key (legacy SETSLOT/MIGRATE), with TTL/2 after each key and the hand-over no sooner than a TTL after it began: clients meet ASK and TRYAGAIN for a lease or more; a failure is rolled back and is the window's unmet"}}

type migrateSlotLegacy struct{ faultBase }

func (f migrateSlotLegacy) Inject(ctx context.Context, env Env) error {
	mv, err := planMove(ctx, env.Topo, env.Key)
	if err != nil {
		return fmt.Errorf("%s: %w", f.name, err)
	}
	mv.method = topology.MigrateLegacy
	win, end := env.openWindow(f.name, mv.from, mv.String())
	defer end()
	begin := time.Now()
	what, moved, err := slowLegacy(ctx, env, mv, env.TTL/2, env.TTL, moveBound(env.TTL))
	recordMove(ctx, env, win, mv, fmt.Sprintf("%s after %s", what, time.Since(begin).Round(time.Millisecond)), moved)
	return err
}

// slowLegacy drives a legacy migration of mv's slot a phase at a time:
// begin, keys moved with keyPause after each, a hold until open has
// passed since the beginning, the keys that came meanwhile, the
// hand-over. A phase that fails, or the bound, or ctx's end, rolls the
// migration back. It says what happened and whether the slot moved; err
// is a rollback's failure.
func slowLegacy(ctx context.Context, env Env, mv slotMove, keyPause, open, bound time.Duration) (string, bool, error) {
	mctx, cancel := context.WithTimeout(ctx, bound)
	defer cancel()
	begin := time.Now()
	l, err := env.Topo.BeginLegacyMigration(mctx, mv.from, mv.to, mv.slot, mv.slot, topology.MigrateOptions{KeyPause: keyPause})
	if err != nil {
		return "failed to begin: " + err.Error(), false, nil
	}
	err = l.MoveKeys(mctx)
	if err == nil {
		err = pace.Hold(mctx, open-time.Since(begin))
	}
	if err == nil {
		err = l.MoveKeys(mctx)
	}
	if err == nil {
		err = l.Finish(mctx)
	}
	if err == nil {
		return fmt.Sprintf("moved, %d keys", l.Status().Keys), true, nil
	}
	what := "failed: " + err.Error()
	if mctx.Err() != nil && ctx.Err() == nil {
		what = fmt.Sprintf("did not finish within %s (%s)", bound, l.Status())
	}
	back, err := rollBack(ctx, l)
	return what + "; " + back, false, err
}

// rollBack undoes l, also after ctx ended, and says how it went; a
// rollback that failed is also an error, since the slot may be left
// half-migrated.
func rollBack(ctx context.Context, l *topology.LegacyMigration) (string, error) {
	cctx, cancel := cleanup(ctx)
	defer cancel()
	if err := l.Rollback(cctx); err != nil {
		return "rollback failed: " + err.Error(), err
	}
	return "rolled back", nil
}
