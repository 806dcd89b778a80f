package compat

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/lockcheck/lockcheck/topology"
)

// migrateCases observe, phase by phase of a key-by-key (legacy) slot
// migration, what each lock command answers on the source and on the
// target, read from each node directly so that the redirects a cluster
// client would follow (ASK, MOVED) and TRYAGAIN show. Each case migrates
// its own keys' slot and rolls it back afterwards, or leaves it handed
// over (finished), which is as consistent.
func migrateCases() []Case {
	return []Case{
		{Name: "migrate/legacy/migrating/source", Kinds: clusterOnly, run: func(ctx context.Context, e *env) verdict {
			return e.inLegacy(ctx, "mig-a-src", nil, func(ctx context.Context, l *topology.LegacyMigration, k migKeys) verdict {
				return e.sideVerdict(e.observeSide(ctx, l.From, false, k, side{holding: holds}))
			})
		}},
		{Name: "migrate/legacy/migrating/target", Kinds: clusterOnly, run: func(ctx context.Context, e *env) verdict {
			return e.inLegacy(ctx, "mig-a-dst", nil, func(ctx context.Context, l *topology.LegacyMigration, k migKeys) verdict {
				plain := e.observeSide(ctx, l.To, false, k, side{redirects, redirect("MOVED", k, l.From)})
				asking := e.observeSide(ctx, l.To, true, k, side{holding: lacks})
				return verdict{outcomeOf(plain.ok && asking.ok),
					"without ASKING: " + plain.String() + " | after ASKING: " + asking.String(),
					"without ASKING: " + join(plain.expected) + " | after ASKING: " + join(asking.expected)}
			})
		}},
		{Name: "migrate/legacy/keys-moved/source", Kinds: clusterOnly, run: func(ctx context.Context, e *env) verdict {
			return e.inLegacy(ctx, "mig-b-src", moveKeys, func(ctx context.Context, l *topology.LegacyMigration, k migKeys) verdict {
				return e.sideVerdict(e.observeSide(ctx, l.From, false, k, side{redirects, redirect("ASK", k, l.To)}))
			})
		}},
		{Name: "migrate/legacy/keys-moved/target", Kinds: clusterOnly, run: func(ctx context.Context, e *env) verdict {
			return e.inLegacy(ctx, "mig-b-dst", moveKeys, func(ctx context.Context, l *topology.LegacyMigration, k migKeys) verdict {
				v := e.sideVerdict(e.observeSide(ctx, l.To, true, k, side{holding: holds}))
				v.observed, v.expected = "after ASKING: "+v.observed, "after ASKING: "+v.expected
				return v
			})
		}},
		{Name: "migrate/legacy/split/fenced", Kinds: clusterOnly, run: func(ctx context.Context, e *env) verdict {
			return e.inLegacy(ctx, "mig-c", moveLockOnly, e.splitFenced)
		}},
		{Name: "migrate/legacy/finished/source", Kinds: clusterOnly, run: func(ctx context.Context, e *env) verdict {
			return e.inLegacy(ctx, "mig-d-src", finish, func(ctx context.Context, l *topology.LegacyMigration, k migKeys) verdict {
				return e.sideVerdict(e.observeSide(ctx, l.From, false, k, side{redirects, redirect("MOVED", k, l.To)}))
			})
		}},
		{Name: "migrate/legacy/finished/target", Kinds: clusterOnly, run: func(ctx context.Context, e *env) verdict {
			return e.inLegacy(ctx, "mig-d-dst", finish, func(ctx context.Context, l *topology.LegacyMigration, k migKeys) verdict {
				return e.sideVerdict(e.observeSide(ctx, l.To, false, k, side{holding: holds}))
			})
		}},
	}
}

// splitFenced: the lock key is on the target, its fence counter (same
// hash tag, same slot) still on the source. The fenced acquire can run
// whole on neither side, and must leave both keys as they were. The
// source refuses it at the queued SET (ASK, then EXECABORT), or, on a
// build that checks keys at EXEC, at EXEC with TRYAGAIN.
func (e *env) splitFenced(ctx context.Context, l *topology.LegacyMigration, k migKeys) verdict {
	src := e.render(send(ctx, l.From, false, fencedTx(k.lock, k.fence)...))
	dst := e.render(send(ctx, l.To, true, fencedTx(k.lock, k.fence)...))
	lock := e.brief(send(ctx, l.To, true, []string{"GET", k.lock})[0])
	fence := e.brief(send(ctx, l.From, false, []string{"GET", k.fence})[0])
	obs := fmt.Sprintf("source: %s; target after ASKING: %s; then lock %s on the target, fence %s on the source", src, dst, lock, fence)
	wantSrc := "SET " + redirect("ASK", k, l.To) + ", INCR QUEUED, EXEC EXECABORT"
	if e.f[ASKAtExec] {
		wantSrc = "TRYAGAIN"
	}
	want := fmt.Sprintf("source: %s; target after ASKING: TRYAGAIN; then lock %s on the target, fence %s on the source", wantSrc, migToken, migFence)
	return always(obs, want, equals(want))
}

// inLegacy holds name's keys, begins a legacy migration of their slot to
// another primary, brings it to a phase with reach (nil: the slot is only
// migrating and importing) and observes it. A migration that did not
// finish is rolled back, whatever the observation found.
func (e *env) inLegacy(ctx context.Context, name string, reach func(context.Context, *topology.LegacyMigration, migKeys) error,
	observe func(context.Context, *topology.LegacyMigration, migKeys) verdict) (v verdict) {
	k := e.migKeys(name)
	if err := e.hold(ctx, k); err != nil {
		return verdict{Fail, err.Error(), "the keys held before the migration"}
	}
	from, to, err := e.migrationPair(ctx, k.slot)
	if err != nil {
		return verdict{Fail, err.Error(), "two primaries"}
	}
	l, err := e.t.BeginLegacyMigration(ctx, from, to, k.slot, k.slot, topology.MigrateOptions{})
	if err != nil {
		return verdict{Fail, err.Error(), "the slot migrating"}
	}
	defer func() {
		if err := e.rollBack(ctx, l, k); err != nil {
			v = verdict{Fail, v.observed + "; then " + err.Error(), v.expected + "; then the slot rolled back"}
		}
	}()
	if reach != nil {
		if err := reach(ctx, l, k); err != nil {
			return verdict{Fail, err.Error(), "the migration at its phase"}
		}
	}
	return observe(ctx, l, k)
}

// rollBack undoes a migration that did not finish. A lock key the
// importing target took after ASKING while the source still held its own
// is dropped on the target first: moving it back would meet the source's
// copy (BUSYKEY).
func (e *env) rollBack(ctx context.Context, l *topology.LegacyMigration, k migKeys) error {
	if l.Status().Done() {
		return nil
	}
	ctx, cancel := cleanupContext(ctx)
	defer cancel()
	for _, key := range k.all() {
		onSource := send(ctx, l.From, false, []string{"EXISTS", key})[0]
		onTarget := send(ctx, l.To, true, []string{"EXISTS", key})[0]
		if onSource.text == "1" && onTarget.text == "1" {
			send(ctx, l.To, true, []string{"DEL", key})
		}
	}
	return l.Rollback(ctx)
}

func moveKeys(ctx context.Context, l *topology.LegacyMigration, _ migKeys) error {
	return l.MoveKeys(ctx)
}

func finish(ctx context.Context, l *topology.LegacyMigration, _ migKeys) error {
	if err := l.MoveKeys(ctx); err != nil {
		return err
	}
	return l.Finish(ctx)
}

// moveLockOnly moves the lock key alone to the target, as a migration
// that moves keys one at a time has done between two of them.
func moveLockOnly(ctx context.Context, l *topology.LegacyMigration, k migKeys) error {
	_, err := l.From.Do(ctx, "MIGRATE", l.To.IP.String(), strconv.Itoa(topology.ServerPort), "", "0", "5000", "KEYS", k.lock)
	if err != nil {
		return fmt.Errorf("move %s alone to %s: %w", k.lock, l.To.Name, err)
	}
	return nil
}

// migrationPair is the slot's owner and another primary to move it to.
func (e *env) migrationPair(ctx context.Context, slot int) (from, to *topology.Node, err error) {
	from, err = e.t.SlotOwner(ctx, slot)
	if err != nil {
		return nil, nil, err
	}
	for _, n := range e.t.Servers() {
		if r, _ := n.Role(ctx); r == topology.RolePrimary && n != from {
			return from, n, nil
		}
	}
	return nil, nil, fmt.Errorf("no primary other than %s to move slot %d to", from.Name, slot)
}

// redirect is the redirect a node should answer for k's slot, as brief
// shows it.
func redirect(kind string, k migKeys, to *topology.Node) string {
	return fmt.Sprintf("%s %d %s", kind, k.slot, to.Name)
}

func (e *env) sideVerdict(v sideView) verdict {
	return verdict{outcomeOf(v.ok), v.String(), join(v.expected)}
}

func outcomeOf(ok bool) Outcome {
	if ok {
		return Pass
	}
	return Fail
}

func join(s []string) string { return strings.Join(s, "; ") }
