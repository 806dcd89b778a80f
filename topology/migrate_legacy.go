package topology

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"
)

// LegacyMigration is a key-by-key migration of the slots First to Last,
// driven a phase at a time so that faults can be injected between them:
// BeginLegacyMigration leaves the target importing and the source
// migrating the slots, MoveKeys moves their keys, Finish hands them over;
// Rollback undoes a migration that will not finish. Between Begin and
// Finish clients meet ASK (a key already on the target) and TRYAGAIN (a
// multi-key command whose keys are split).
type LegacyMigration struct {
	From, To    *Node
	First, Last int

	t            *Topology
	opts         MigrateOptions
	fromID, toID string

	mu    sync.Mutex
	phase string
	keys  int
	err   error
}

// The legacy migration's phases, as Status reports them.
const (
	legacyBegun      = "importing-and-migrating"
	legacyMoving     = "moving-keys"
	legacyMoved      = "keys-moved"
	legacyFinished   = "finished"
	legacyRolledBack = "rolled-back"
)

// BeginLegacyMigration checks that from owns every slot of the range and
// sets each slot IMPORTING from the source on the target, then MIGRATING
// to the target on the source (the order valkey-cli uses, so that no
// client is sent by ASK to a target that would not take it).
func (t *Topology) BeginLegacyMigration(ctx context.Context, from, to *Node, first, last int, opts MigrateOptions) (*LegacyMigration, error) {
	what := fmt.Sprintf("begin legacy migration of slots %d-%d from %s to %s", first, last, from.Name, to.Name)
	if err := t.requireCluster(what); err != nil {
		return nil, err
	}
	if err := checkSlots(first, last); err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	l := &LegacyMigration{From: from, To: to, First: first, Last: last, t: t, opts: opts.withDefaults()}
	if err := l.begin(ctx); err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	l.setPhase(legacyBegun, 0, nil)
	return l, nil
}

func (l *LegacyMigration) begin(ctx context.Context) error {
	for _, n := range []*Node{l.From, l.To} {
		if err := n.MigrationSupport(ctx, MigrateLegacy); err != nil {
			return err
		}
	}
	var err error
	if l.fromID, err = l.From.ClusterID(ctx); err != nil {
		return err
	}
	if l.toID, err = l.To.ClusterID(ctx); err != nil {
		return err
	}
	owner, err := l.From.slotOwnerID(ctx, l.First, l.Last)
	if err != nil {
		return err
	}
	if owner != l.fromID {
		return fmt.Errorf("%s says it does not own them (owner %s)", l.From.Name, owner)
	}
	// every slot importing before any is migrating (eachSlot: many at once)
	if err := l.To.eachSlotOK(ctx, l.First, l.Last, "SETSLOT", "IMPORTING", l.fromID); err != nil {
		return err
	}
	return l.From.eachSlotOK(ctx, l.First, l.Last, "SETSLOT", "MIGRATING", l.toID)
}

// MoveKeys moves every key of the range from the source to the target
// with MIGRATE, pausing as the options say, until the source lists none.
// It may be called again after an error, and returns ctx's error when ctx
// ends during a pause or a command. The slots the source counts no key
// in are not listed: a migrating source sends a write of a key it lacks
// to the target (ASK), so no key appears there once Begin has run.
func (l *LegacyMigration) MoveKeys(ctx context.Context) error {
	l.setPhase(legacyMoving, 0, nil)
	counts, err := l.From.eachSlot(ctx, l.First, l.Last, "COUNTKEYSINSLOT")
	if err != nil {
		return err
	}
	for slot := l.First; slot <= l.Last; slot++ {
		if c := counts[slot-l.First]; c.Err == nil && c.Text == "0" {
			err = nil
		} else {
			err = l.moveSlot(ctx, slot)
		}
		if err != nil {
			err = fmt.Errorf("move the keys of slot %d from %s to %s: %w", slot, l.From.Name, l.To.Name, err)
			l.setPhase(legacyMoving, 0, err)
			return err
		}
		if slot < l.Last {
			if err := pause(ctx, l.opts.SlotPause); err != nil {
				return err
			}
		}
	}
	l.setPhase(legacyMoved, 0, nil)
	return nil
}

func (l *LegacyMigration) moveSlot(ctx context.Context, slot int) error {
	for {
		keys, err := l.keysIn(ctx, l.From, slot)
		if err != nil || len(keys) == 0 {
			return err
		}
		if l.opts.KeyPause <= 0 {
			if err := l.migrate(ctx, l.From, l.To, keys); err != nil {
				return err
			}
			l.setPhase(legacyMoving, len(keys), nil)
			continue
		}
		for _, k := range keys {
			if err := l.migrate(ctx, l.From, l.To, []string{k}); err != nil {
				return err
			}
			l.setPhase(legacyMoving, 1, nil)
			if err := pause(ctx, l.opts.KeyPause); err != nil {
				return err
			}
		}
	}
}

func (l *LegacyMigration) keysIn(ctx context.Context, n *Node, slot int) ([]string, error) {
	msg, err := n.do(ctx, "CLUSTER", "GETKEYSINSLOT", itoa(slot), itoa(l.opts.Batch))
	if err != nil {
		return nil, err
	}
	return msg.AsStrSlice()
}

// migrate moves keys from src to dst in one MIGRATE. On a node that is
// importing the slot (a rollback's source), MIGRATE reads the keys only
// after ASKING on the same connection.
func (l *LegacyMigration) migrate(ctx context.Context, src, dst *Node, keys []string) error {
	args := l.migrateArgs(dst, keys)
	c, err := src.Client()
	if err != nil {
		return err
	}
	reps := c.DoMulti(ctx, c.B().Arbitrary("ASKING").Build(), c.B().Arbitrary(args...).Build())
	for i, r := range reps {
		if _, err := ReplyText(r); err != nil {
			return fmt.Errorf("%s of %d keys on %s: %w", []string{"ASKING", "MIGRATE"}[i], len(keys), src.Name, err)
		}
	}
	return nil
}

// migrateArgs is the MIGRATE of keys to dst, with the options' timeout
// and REPLACE.
func (l *LegacyMigration) migrateArgs(dst *Node, keys []string) []string {
	args := []string{"MIGRATE", dst.IP.String(), strconv.Itoa(ServerPort), "", "0", strconv.FormatInt(l.opts.Timeout.Milliseconds(), 10)}
	if l.opts.Replace {
		args = append(args, "REPLACE")
	}
	return append(append(args, "KEYS"), keys...)
}

// Finish hands the slots to the target: SETSLOT NODE on the target first
// (for every slot of the range, many at once: eachSlot), then the source (which refuses while it holds keys of a slot), then
// every other primary the target knows, so that none sends clients to
// the source for a moment. A node whose SETSLOT fails but that already
// names the target the owner needs none: it learned it from the target's
// gossip, as a source that gave its last slot away does, which then turns
// into a replica of the target and answers SETSLOT with an error. It goes
// on past another primary that fails and returns every failure.
func (l *LegacyMigration) Finish(ctx context.Context) error {
	others, err := l.otherPrimaries(ctx)
	var errs []error
	if err != nil {
		errs = append(errs, err)
	}
	for _, n := range append([]*Node{l.To, l.From}, others...) {
		reps, err := n.eachSlot(ctx, l.First, l.Last, "SETSLOT", "NODE", l.toID)
		if err != nil {
			reps = []slotReply{{Slot: l.First, Err: err}}
		}
		for _, r := range reps {
			if r.Err == nil || n != l.To && l.namesTarget(ctx, n, r.Slot) {
				continue
			}
			errs = append(errs, r.Err)
			if n == l.To || n == l.From {
				return fmt.Errorf("finish legacy migration of slot %d: %w", r.Slot, errors.Join(errs...))
			}
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("finish legacy migration: %w", err)
	}
	l.setPhase(legacyFinished, 0, nil)
	return nil
}

// namesTarget says n already names the target the owner of slot.
func (l *LegacyMigration) namesTarget(ctx context.Context, n *Node, slot int) bool {
	id, err := n.slotOwnerID(ctx, slot, slot)
	return err == nil && id == l.toID
}

// otherPrimaries are the primaries of the topology other than the source
// and the target, as the target sees them.
func (l *LegacyMigration) otherPrimaries(ctx context.Context) ([]*Node, error) {
	s, err := l.To.Do(ctx, "CLUSTER", "NODES")
	if err != nil {
		return nil, err
	}
	var out []*Node
	for _, cn := range parseClusterNodes(s) {
		if n := l.t.byInternal(cn.addr); n != nil && cn.primary && !cn.failed && n != l.From && n != l.To {
			out = append(out, n)
		}
	}
	return out, nil
}

// Rollback undoes a migration that has not finished, a slot at a time:
// the source's slot is made stable first (while it is migrating, it
// answers the keys sent back with ASK), the keys already on the target
// are moved back, and the target's slot is made stable. Until a slot's
// keys are back, a client the source serves finds them missing.
func (l *LegacyMigration) Rollback(ctx context.Context) error {
	for slot := l.First; slot <= l.Last; slot++ {
		if _, err := l.From.Do(ctx, "CLUSTER", "SETSLOT", itoa(slot), "STABLE"); err != nil {
			return fmt.Errorf("roll back slot %d: %w", slot, err)
		}
		for {
			keys, err := l.keysIn(ctx, l.To, slot)
			if err != nil {
				return fmt.Errorf("roll back slot %d: %w", slot, err)
			}
			if len(keys) == 0 {
				break
			}
			if err := l.migrate(ctx, l.To, l.From, keys); err != nil {
				return fmt.Errorf("roll back slot %d: %w", slot, err)
			}
		}
		if _, err := l.To.Do(ctx, "CLUSTER", "SETSLOT", itoa(slot), "STABLE"); err != nil {
			return fmt.Errorf("roll back slot %d: %w", slot, err)
		}
	}
	l.setPhase(legacyRolledBack, 0, nil)
	return nil
}

// Status is where the migration stands: its phase, the keys moved so far
// and the last error of a phase.
func (l *LegacyMigration) Status() MigrationStatus {
	l.mu.Lock()
	defer l.mu.Unlock()
	st := MigrationStatus{State: MigrationRunning, Phase: l.phase, Keys: l.keys}
	switch l.phase {
	case legacyFinished:
		st.State = MigrationSucceeded
	case legacyRolledBack:
		st.State = MigrationCancelled
	}
	if l.err != nil {
		st.Message = l.err.Error()
	}
	return st
}

// setPhase records the phase, adds moved to the keys moved, and records
// err (nil clears it).
func (l *LegacyMigration) setPhase(phase string, moved int, err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.phase, l.err = phase, err
	l.keys += moved
}

// pause waits d, or less when ctx ends first.
func pause(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
