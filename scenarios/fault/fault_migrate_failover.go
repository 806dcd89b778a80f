package fault

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/lockcheck/lockcheck/scenarios/internal/pace"
	"github.com/lockcheck/lockcheck/topology"
)

// MigrateAndFailover kills the source of a migration of the lock key's
// slot midway: the lock may be on the source, on the target, or on both,
// when the source's replica takes over. A Valkey atomic migration is
// held at waiting-to-pause by the source's hook (the slot copied to the
// target and streaming, the source its owner still), Redis's as
// cancel-migration keeps it (its target drops the source's packets until
// the kill, so it never begins importing); a legacy one begins and moves its keys with a
// quarter lease after each, and the kill comes after the first key moved
// (or half a lease). Then the promotion, and the migration's end as the
// servers say it (it may fail: the window says what they answered),
// within 30 s, else it is cancelled. A legacy migration, whose state the
// promoted replica does not finish, is rolled back onto it. The killed
// node comes back as kill-primary's does, as a replica.
var MigrateAndFailover Fault = migrateAndFailover{faultBase{"migrate-and-failover", clusterOnly, "starts moving the lock key's slot (best method) and SIGKILLs its source midway (a Valkey atomic migration held at waiting-to-pause by the source's hook, the slot copied and streaming; else with the target cut off); a replica is promoted, the migration's end is what the servers say (30 s at most, else cancelled; legacy rolled back onto the promoted replica); the killed node comes back as a replica"}}

type migrateAndFailover struct{ faultBase }

// errBeforeKill is a failure before the source was killed: the fault
// then did nothing a run could show, and the window says so (unmet).
var errBeforeKill = errors.New("before the kill")

func (f migrateAndFailover) Inject(ctx context.Context, env Env) (err error) {
	mv, err := planBestMove(ctx, env, f.name)
	if err != nil {
		return err
	}
	win, end := env.openWindow(f.name, mv.from, mv.String())
	defer end()
	var what string
	if mv.method == topology.MigrateLegacy {
		what, err = f.legacy(ctx, env, win, mv)
	} else {
		what, err = f.atomic(ctx, env, win, mv)
	}
	if err != nil {
		what += "; " + err.Error()
	}
	env.Rec.FaultTarget(win, mv.from.Name, mv.String()+": "+what)
	if errors.Is(err, errBeforeKill) {
		env.unmet(win, "%s: %s", mv, what)
		return nil
	}
	if rerr := (killPrimary{}).rejoin(ctx, env, mv.from); rerr != nil {
		return errors.Join(err, fmt.Errorf("%s: %s did not rejoin: %w", f.name, mv.from.Name, rerr))
	}
	if ctx.Err() != nil {
		return err
	}
	return errors.Join(err, settle(ctx, env))
}

// atomic starts an atomic migration held midway, kills the source and
// follows the migration on its target. A Valkey migration is held by the
// source's own hook at waiting-to-pause (the slot copied to the target
// and streaming, the source still its owner); a build without the hook
// (Redis's migration) is held by cutting the target off from the
// source, so that it never begins importing, and healed after the kill.
func (f migrateAndFailover) atomic(ctx context.Context, env Env, win int, mv slotMove) (string, error) {
	m, heal, err := startHeld(ctx, env, mv)
	defer heal()
	if err != nil {
		what := "failed to start, or to hold it midway"
		if m != nil {
			what += "; " + cancelMove(ctx, m)
		}
		return what, fmt.Errorf("%w: %v", errBeforeKill, err)
	}
	before, _ := m.Status(ctx)
	promoted, err := killAndPromote(ctx, env, win, mv.from, heal)
	what := fmt.Sprintf("SIGKILL of %s at %s; %s", mv.from.Name, before, promoted)
	if err != nil {
		return what, err
	}
	bound := 30 * time.Second
	var st topology.MigrationStatus
	var serr error
	done := pace.Poll(ctx, bound, 100*time.Millisecond, func() bool {
		st, serr = m.TargetStatus(ctx)
		return errors.Is(serr, topology.ErrNoImport) || (serr == nil && st.Done())
	}) == nil
	switch {
	case done && serr != nil:
		// the export was the source's alone, and died with it
		return fmt.Sprintf("%s; the migration ended with its source: %s never began importing", what, mv.to.Name), nil
	case done:
		return fmt.Sprintf("%s; the migration ended %s", what, st), nil
	}
	return fmt.Sprintf("%s; the migration did not end within %s (last %s, %v); %s", what, bound, st, serr, cancelMove(ctx, m)), nil
}

// startHeld starts mv's atomic migration and holds it midway (see
// atomic); heal undoes the hold by a cut, at most once.
func startHeld(ctx context.Context, env Env, mv slotMove) (*topology.Migration, func() error, error) {
	none := func() error { return nil }
	if mv.method == topology.MigrateValkeyAtomic && mv.from.HoldMigration(ctx, topology.HoldBeforePause, true) == nil {
		m, err := env.Topo.MigrateSlots(ctx, mv.method, mv.from, mv.to, mv.slot, mv.slot, topology.MigrateOptions{})
		if err == nil {
			err = pace.Poll(ctx, 10*time.Second+env.TTL, 20*time.Millisecond, func() bool {
				st, serr := m.Status(ctx)
				return serr == nil && st.Phase == topology.WaitingToPause
			})
		}
		if err != nil {
			cctx, cancel := cleanup(ctx)
			defer cancel()
			mv.from.HoldMigration(cctx, topology.HoldBeforePause, false)
		}
		return m, none, err
	}
	if err := mv.to.Cut(ctx, mv.from); err != nil {
		return nil, none, fmt.Errorf("cut %s off from %s: %w", mv.to.Name, mv.from.Name, err)
	}
	heal := sync.OnceValue(func() error {
		cctx, cancel := cleanup(ctx)
		defer cancel()
		return mv.to.Heal(cctx)
	})
	m, err := env.Topo.MigrateSlots(ctx, mv.method, mv.from, mv.to, mv.slot, mv.slot, topology.MigrateOptions{})
	if err == nil {
		err = pace.Hold(ctx, cancelAfter)
	}
	return m, heal, err
}

// legacy begins a legacy migration, moves keys in the background with a
// quarter lease after each, kills the source once one moved (or after
// half a lease), and rolls the migration back onto the promoted replica.
func (f migrateAndFailover) legacy(ctx context.Context, env Env, win int, mv slotMove) (string, error) {
	l, err := env.Topo.BeginLegacyMigration(ctx, mv.from, mv.to, mv.slot, mv.slot, topology.MigrateOptions{KeyPause: env.TTL / 4})
	if err != nil {
		return "failed to begin", fmt.Errorf("%w: %v", errBeforeKill, err)
	}
	mctx, stop := context.WithCancel(ctx)
	defer stop()
	moved := make(chan error, 1)
	go func() { moved <- l.MoveKeys(mctx) }()
	pace.Poll(ctx, env.TTL/2, 5*time.Millisecond, func() bool { return l.Status().Keys > 0 })
	before := l.Status()
	promoted, err := killAndPromote(ctx, env, win, mv.from, func() error { return nil })
	what := fmt.Sprintf("SIGKILL of %s at %s; %s", mv.from.Name, before, promoted)
	var moveErr error
	select {
	case moveErr = <-moved:
	case <-time.After(10 * time.Second):
		stop()
		moveErr = fmt.Errorf("still moving keys 10 s after the kill: %w", <-moved)
	}
	if moveErr != nil {
		what += "; moving the keys failed: " + moveErr.Error()
	} else {
		what += fmt.Sprintf("; every key had moved (%d), the hand-over not begun", l.Status().Keys)
	}
	if err != nil {
		return what, err
	}
	np, err := env.Topo.SlotOwner(ctx, mv.slot)
	if err != nil {
		return what, err
	}
	back, err := env.Topo.BeginLegacyMigration(ctx, np, mv.to, mv.slot, mv.slot, topology.MigrateOptions{Replace: true})
	if err != nil {
		return what + "; could not take the migration over on " + np.Name, err
	}
	out, err := rollBack(ctx, back)
	return fmt.Sprintf("%s; %s onto %s", what, out, np.Name), err
}

// killAndPromote SIGKILLs the source, runs heal, and waits for the
// promotion of a replica (recorded in window win). It says what happened.
func killAndPromote(ctx context.Context, env Env, win int, source *topology.Node, heal func() error) (string, error) {
	if err := source.Kill(ctx); err != nil {
		return "", err
	}
	if err := heal(); err != nil {
		return "", err
	}
	np, err := newPrimary(ctx, env.Topo, env.Key, source, 30*time.Second)
	if err != nil {
		return "no promotion", err
	}
	env.Rec.FaultPromoted(win, np.Name)
	return np.Name + " took over", nil
}
