package fault

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/lockcheck/lockcheck/topology"
)

// reshardSteps are the steps of shard i of a cluster upgraded with
// resharding (Env.Reshard), the way an operator replaces a primary
// without a failover: its slots move to another primary, its replicas
// and then the emptied primary are reinstalled, and the slots move back.
// The other primary is the first shard's, already upgraded, for every
// shard but the first, whose slots go to the second shard's (not yet
// upgraded): so slots only ever move onto a build at least as new as
// their source's on an upgrade. (On a rollback they move from a newer
// build to an older one, which may refuse what the newer one sends: the
// step then fails and says so.) The servers run with
// cluster-allow-replica-migration off (Scenario.ServerConfig): an
// emptied primary stays a primary, to take its slots back.
func reshardSteps(t *topology.Topology, shards []topology.Shard, i int, reinstall func(*topology.Node, string) upgradeStep) ([]upgradeStep, error) {
	if len(shards) < 2 {
		return nil, fmt.Errorf("a cluster of %d shard has no other primary to hold its slots: reshard needs two", len(shards))
	}
	p, q := shards[i].Primary, shards[0].Primary
	if i == 0 {
		q = shards[1].Primary
	}
	var moved [][2]int // the ranges p gave away, for the way back
	steps := []upgradeStep{{what: fmt.Sprintf("empty %s: its slots to %s", p.Name, q.Name), target: p,
		act: func(ctx context.Context) error {
			var err error
			if moved, err = p.OwnedSlots(ctx); err != nil {
				return err
			}
			if err := moveRanges(ctx, t, p, q, moved); err != nil {
				return err
			}
			return owns(ctx, p, nil)
		}}}
	for _, r := range shards[i].Replicas {
		steps = append(steps, reinstall(r, "replica"))
	}
	steps = append(steps, reinstall(p, "emptied primary, in place"),
		upgradeStep{what: fmt.Sprintf("give %s its slots back from %s", p.Name, q.Name), target: p,
			act: func(ctx context.Context) error {
				if r, err := p.Role(ctx); err != nil || r != topology.RolePrimary {
					return fmt.Errorf("%s came back as %s (%v), not the primary its slots go back to", p.Name, r, err)
				}
				if err := moveRanges(ctx, t, q, p, moved); err != nil {
					return err
				}
				return owns(ctx, p, moved)
			}})
	return steps, nil
}

// moveRanges moves each range from one primary to another by the best
// method both have, one migration at a time, and fails at the first that
// does not end moved, saying by which method and how.
func moveRanges(ctx context.Context, t *topology.Topology, from, to *topology.Node, ranges [][2]int) error {
	if len(ranges) == 0 {
		return fmt.Errorf("%s owns no slots to move", from.Name)
	}
	method, err := bestMethod(ctx, from, to, atomicFirst...)
	if err != nil {
		return err
	}
	var done []string
	for _, r := range ranges {
		if err := moveRange(ctx, t, from, to, method, r[0], r[1]); err != nil {
			return fmt.Errorf("slots %d-%d by %s: %w (moved before it: %s)", r[0], r[1], method, err, strings.Join(done, ", "))
		}
		done = append(done, fmt.Sprintf("%d-%d", r[0], r[1]))
	}
	return nil
}

// owns checks that n says it owns exactly ranges (none: nil), so that a
// step that moved slots is seen to have moved them, not only to have had
// its commands accepted.
func owns(ctx context.Context, n *topology.Node, ranges [][2]int) error {
	got, err := n.OwnedSlots(ctx)
	if err != nil {
		return err
	}
	if !slices.Equal(got, ranges) {
		return fmt.Errorf("%s owns slots %v afterwards, want %v", n.Name, got, ranges)
	}
	return nil
}

// reshardBound bounds one range's migration: thousands of slots key by
// key take seconds by the legacy method (15 s at load 4 here), and a
// bound only ends a move that is stuck.
const reshardBound = 5 * time.Minute

// moveRange moves first..last and waits for its end, within reshardBound;
// a migration that has not ended by then is cancelled (legacy: rolled
// back), so that the slots keep one owner.
func moveRange(ctx context.Context, t *topology.Topology, from, to *topology.Node, method topology.MigrationMethod, first, last int) error {
	m, err := t.MigrateSlots(ctx, method, from, to, first, last, topology.MigrateOptions{})
	if err != nil {
		return err
	}
	wctx, cancel := context.WithTimeout(ctx, reshardBound)
	defer cancel()
	st, err := m.Wait(wctx)
	switch {
	case err != nil:
		cctx, ccancel := cleanup(ctx)
		defer ccancel()
		if cerr := m.Cancel(cctx); cerr != nil {
			return fmt.Errorf("did not end within %s (last status %s), and cancelling it failed: %v", reshardBound, st, cerr)
		}
		return fmt.Errorf("did not end within %s (last status %s), cancelled", reshardBound, st)
	case st.State != topology.MigrationSucceeded:
		return fmt.Errorf("ended %s", st)
	}
	return nil
}
