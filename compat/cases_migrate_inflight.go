package compat

import (
	"context"
	"fmt"
	"time"

	"github.com/lockcheck/lockcheck/topology"
)

// waitingToPause is the state in which a Valkey atomic migration has
// copied the slots and waits to pause writes on the source before it
// hands them over; DEBUG SLOTMIGRATION PREVENT-PAUSE 1 keeps it there, as
// Valkey's own tests of the command do.
const waitingToPause = "waiting-to-pause"

// valkeyInFlight holds a CLUSTER MIGRATESLOTS job before its hand-over,
// observes what the source answers while the job runs, checks that it
// still ran afterwards, and cancels it: the slot stays on the source.
// Holding it with the server's own switch rather than by freezing a node
// keeps the observation out of a race with a migration that ends in
// milliseconds.
func valkeyInFlight(ctx context.Context, e *env) verdict {
	method := topology.MigrateValkeyAtomic
	k := e.migKeys("mig-valkey-atomic-flight")
	from, to, err := e.migrationPair(ctx, k.slot)
	if err != nil {
		return verdict{Fail, err.Error(), "two primaries"}
	}
	if v, ok := atomicSupport(ctx, method, from, to); !ok {
		return v
	}
	if err := e.hold(ctx, k); err != nil {
		return verdict{Fail, err.Error(), "the keys held before the migration"}
	}
	if got := nodeDo(ctx, from, "DEBUG", "SLOTMIGRATION", "PREVENT-PAUSE", "1"); got != "OK" {
		return verdict{Fail, "DEBUG SLOTMIGRATION PREVENT-PAUSE 1: " + got, "OK"}
	}
	defer func() {
		cctx, cancel := cleanupContext(ctx)
		defer cancel()
		nodeDo(cctx, from, "DEBUG", "SLOTMIGRATION", "PREVENT-PAUSE", "0")
	}()
	m, err := e.t.MigrateSlots(ctx, method, from, to, k.slot, k.slot, topology.MigrateOptions{})
	if err != nil {
		return verdict{Fail, err.Error(), "the migration started"}
	}
	defer cancelAtomic(ctx, m)
	before, err := awaitPhase(ctx, m, waitingToPause, 10*time.Second)
	if err != nil {
		return verdict{Fail, err.Error(), "the job " + waitingToPause}
	}
	v := e.observeSide(ctx, from, false, k, side{holding: holds})
	after, err := m.Status(ctx)
	obs := fmt.Sprintf("job %s; %s; then job %s %v", before.Phase, v, after.Phase, errText(err))
	want := fmt.Sprintf("job %s; %s; then job %s", waitingToPause, join(v.expected), waitingToPause)
	return verdict{outcomeOf(v.ok && err == nil && after.Phase == waitingToPause), obs, want}
}

// awaitPhase polls the migration's status until it is at phase, within d.
func awaitPhase(ctx context.Context, m *topology.Migration, phase string, d time.Duration) (topology.MigrationStatus, error) {
	deadline := time.Now().Add(d)
	for {
		st, err := m.Status(ctx)
		if err == nil && st.Phase == phase {
			return st, nil
		}
		if err == nil && st.Done() || time.Now().After(deadline) || ctx.Err() != nil {
			return st, fmt.Errorf("%s not at %s within %s: %s %v", m, phase, d, st, errText(err))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// cancelAtomic cancels a migration still running and waits, bounded, until
// its target too says it has ended, so that the next case finds no import
// under way.
func cancelAtomic(ctx context.Context, m *topology.Migration) {
	ctx, cancel := cleanupContext(ctx)
	defer cancel()
	if st, err := m.Status(ctx); err == nil && !st.Done() {
		_ = m.Cancel(ctx)
	}
	for ctx.Err() == nil {
		if st, err := m.TargetStatus(ctx); err != nil || st.Done() {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// cleanupContext outlives the case's own deadline by a bounded time.
func cleanupContext(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return "(" + err.Error() + ")"
}
