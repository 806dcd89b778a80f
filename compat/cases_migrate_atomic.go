package compat

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/lockcheck/lockcheck/topology"
)

// atomicMigrateCases observe the lock commands after an atomic slot
// migration (Valkey's CLUSTER MIGRATESLOTS, Redis's CLUSTER MIGRATION
// IMPORT) and, where the server can hold one in flight, during it. A build
// without the method gives unsupported cells with the reason its servers
// give.
func atomicMigrateCases() []Case {
	var cases []Case
	for _, m := range []topology.MigrationMethod{topology.MigrateValkeyAtomic, topology.MigrateRedisAtomic} {
		cases = append(cases,
			Case{Name: "migrate/" + string(m) + "/finished/source", Kinds: clusterOnly, run: func(ctx context.Context, e *env) verdict {
				return e.afterAtomic(ctx, m, "src", func(ctx context.Context, from, to *topology.Node, k migKeys) verdict {
					return e.sideVerdict(e.observeSide(ctx, from, false, k, side{redirects, redirect("MOVED", k, to)}))
				})
			}},
			Case{Name: "migrate/" + string(m) + "/finished/target", Kinds: clusterOnly, run: func(ctx context.Context, e *env) verdict {
				return e.afterAtomic(ctx, m, "dst", e.movedLock)
			}})
	}
	return append(cases, Case{Name: "migrate/valkey-atomic/in-flight/source", Kinds: clusterOnly, run: valkeyInFlight})
}

// movedLock: the target serves the lock as the source held it, with its
// value and its deadline (a positive PTTL), and every lock command.
func (e *env) movedLock(ctx context.Context, _, to *topology.Node, k migKeys) verdict {
	val := e.brief(send(ctx, to, false, []string{"GET", k.lock})[0])
	pttl := e.brief(send(ctx, to, false, []string{"PTTL", k.lock})[0])
	kept := "PTTL " + pttl
	if n, err := strconv.Atoi(pttl); err == nil && n > 0 && n <= 30000 {
		kept = "PTTL in (0, 30000]"
	}
	v := e.observeSide(ctx, to, false, k, side{holding: holds})
	obs := fmt.Sprintf("GET %s, %s; %s", val, kept, v)
	want := fmt.Sprintf("GET %s, PTTL in (0, 30000]; %s", migToken, join(v.expected))
	return verdict{outcomeOf(v.ok && val == migToken && kept == "PTTL in (0, 30000]"), obs, want}
}

// afterAtomic holds name's keys, migrates their slot to another primary
// by method, waits until the migration has succeeded and the source no
// longer owns the slot, and observes. (Waiting for every server, replicas
// included, to learn the owner by gossip would cost seconds and change
// nothing the two primaries answer.) The slot stays on the
// target.
func (e *env) afterAtomic(ctx context.Context, method topology.MigrationMethod, name string,
	observe func(ctx context.Context, from, to *topology.Node, k migKeys) verdict) verdict {
	k := e.migKeys("mig-" + string(method) + "-" + name)
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
	m, err := e.t.MigrateSlots(ctx, method, from, to, k.slot, k.slot, topology.MigrateOptions{})
	if err != nil {
		return verdict{Fail, err.Error(), "the migration started"}
	}
	wctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	if st, err := m.Wait(wctx); err != nil || st.State != topology.MigrationSucceeded {
		return verdict{Fail, fmt.Sprintf("%s: %s %v", m, st, err), "the migration succeeded"}
	}
	if err := sourceGaveUp(ctx, from, k.slot, 10*time.Second); err != nil {
		return verdict{Fail, err.Error(), "the source no longer owns the slot"}
	}
	return observe(ctx, from, to, k)
}

// atomicSupport: both primaries must have the method; a build without it
// is unsupported, with the reason its server gives.
func atomicSupport(ctx context.Context, method topology.MigrationMethod, from, to *topology.Node) (verdict, bool) {
	for _, n := range []*topology.Node{from, to} {
		err := n.MigrationSupport(ctx, method)
		if errors.Is(err, topology.ErrUnsupported) {
			return verdict{Unsupported, err.Error(), string(method) + " migration"}, false
		}
		if err != nil {
			return verdict{Fail, err.Error(), "the server says whether it has " + string(method)}, false
		}
	}
	return verdict{}, true
}

// sourceGaveUp polls until from no longer lists slot among its own, within d.
func sourceGaveUp(ctx context.Context, from *topology.Node, slot int, d time.Duration) error {
	deadline := time.Now().Add(d)
	for {
		ranges, err := from.OwnedSlots(ctx)
		if err == nil && !slices.ContainsFunc(ranges, func(r [2]int) bool { return slot >= r[0] && slot <= r[1] }) {
			return nil
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return fmt.Errorf("%s still owns slot %d after %s (%v, %v)", from.Name, slot, d, ranges, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
