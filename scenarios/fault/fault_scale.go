package fault

import (
	"context"
	"fmt"
	"strings"

	"github.com/lockcheck/lockcheck/topology"
)

// ScaleOut adds a shard to the cluster and moves the lock key's slot onto
// its primary, as an operator who adds capacity does: the new primary
// has never held the lock, and clients find it through MOVED. The slot
// moves by the best method (as migrate-slot); a move that fails or does
// not end within its bound is the window's unmet. The shard stays: a
// later scale-in may take one away.
var ScaleOut Fault = scaleOut{faultBase{"scale-out", clusterOnly, "adds a shard (a primary and its replica) and moves the lock key's slot onto the new primary by the best method (as migrate-slot); the shard stays"}}

type scaleOut struct{ faultBase }

func (f scaleOut) Inject(ctx context.Context, env Env) error {
	mv := slotMove{key: env.Key, slot: topology.KeySlot(env.Key)}
	var err error
	if mv.from, err = env.Topo.SlotOwner(ctx, mv.slot); err != nil {
		return fmt.Errorf("%s: %w", f.name, err)
	}
	win, end := env.openWindow(f.name, mv.from, fmt.Sprintf("add a shard, then move slot %d (%s) onto it", mv.slot, env.Key))
	defer end()
	sh, err := env.Topo.AddShard(ctx)
	if err != nil {
		env.Rec.FaultTarget(win, mv.from.Name, "add a shard failed: "+err.Error())
		env.unmet(win, "add a shard failed: %v", err)
		return fmt.Errorf("%s: %w", f.name, err)
	}
	mv.to = sh.Primary
	if mv.method, err = bestMethod(ctx, mv.from, mv.to, atomicFirst...); err != nil {
		return fmt.Errorf("%s: %w", f.name, err)
	}
	what, moved, err := migrateAndWait(ctx, env, mv, mv.slot, mv.slot, moveBound(env.TTL))
	recordMove(ctx, env, win, mv, fmt.Sprintf("added %s (replica %s); %s", sh.Primary.Name, names(sh.Replicas), what), moved)
	return err
}

// ScaleIn empties the primary that owns the lock key's slot into the
// other primaries, each range split evenly among them, and removes its
// shard: the lock moves with its slot, and the node that held it is gone.
// Only an atomic method moves thousands of slots in a fault's time; a
// build with the legacy method alone is the window's unmet, and nothing
// moves. A cluster of fewer than three shards gets one first (as
// scale-out adds it), so that two remain.
var ScaleIn Fault = scaleIn{faultBase{"scale-in", clusterOnly, "moves every slot of the lock key's primary to the other primaries (atomic methods only; legacy is the window's unmet) and removes its shard; a cluster of fewer than three shards gets one first"}}

type scaleIn struct{ faultBase }

func (f scaleIn) Inject(ctx context.Context, env Env) error {
	slot := topology.KeySlot(env.Key)
	from, err := env.Topo.SlotOwner(ctx, slot)
	if err != nil {
		return fmt.Errorf("%s: %w", f.name, err)
	}
	win, end := env.openWindow(f.name, from, fmt.Sprintf("empty %s, the owner of slot %d (%s), and remove its shard", from.Name, slot, env.Key))
	defer end()
	var log []string
	detail := func(s string) {
		log = append(log, s)
		env.Rec.FaultTarget(win, from.Name, strings.Join(log, "; "))
	}
	others, err := f.receivers(ctx, env, from, detail)
	if err != nil {
		detail(err.Error())
		return fmt.Errorf("%s: %w", f.name, err)
	}
	method, err := bestMethod(ctx, from, others[0], topology.MigrateValkeyAtomic, topology.MigrateRedisAtomic)
	if err != nil {
		detail("no atomic method: " + err.Error())
		env.unmet(win, "%s has only the legacy migration, too slow for its thousands of slots: nothing moved", from.Name)
		return nil
	}
	// the shard as it is now: once emptied, its primary turns replica
	shard, err := shardOf(ctx, env.Topo, from)
	if err != nil {
		detail(err.Error())
		return fmt.Errorf("%s: %w", f.name, err)
	}
	ok, err := f.empty(ctx, env, from, others, method, detail)
	if !ok || err != nil {
		env.unmet(win, "%s was not emptied: %s", from.Name, log[len(log)-1])
		return err
	}
	owner, err := env.Topo.SlotOwner(ctx, slot)
	if err == nil {
		var served string
		served, err = servedBy(ctx, env, slotMove{key: env.Key, slot: slot, from: from, to: owner, method: method})
		detail(served)
	}
	if err != nil {
		detail("the lock key's new owner: " + err.Error())
		env.unmet(win, "%s was emptied, but %v", from.Name, err)
		return nil
	}
	env.Rec.FaultPromoted(win, owner.Name)
	if err := env.Topo.RemoveShard(ctx, shard); err != nil {
		detail("remove failed: " + err.Error())
		return fmt.Errorf("%s: %w", f.name, err)
	}
	detail("removed the shard of " + from.Name)
	return nil
}

// receivers are the primaries that take from's slots, after a shard was
// added when fewer than three own slots.
func (f scaleIn) receivers(ctx context.Context, env Env, from *topology.Node, detail func(string)) ([]*topology.Node, error) {
	others, err := otherPrimaries(ctx, env.Topo, from)
	if err != nil || len(others) >= 2 {
		return others, err
	}
	sh, err := env.Topo.AddShard(ctx)
	if err != nil {
		return nil, fmt.Errorf("add a shard first: %w", err)
	}
	detail(fmt.Sprintf("added %s (replica %s) first", sh.Primary.Name, names(sh.Replicas)))
	return append(others, sh.Primary), nil
}

// empty moves each range from owns to the others, split evenly among
// them, one migration at a time; it stops at the first that does not
// move, and says whether all did.
func (f scaleIn) empty(ctx context.Context, env Env, from *topology.Node, others []*topology.Node, method topology.MigrationMethod, detail func(string)) (bool, error) {
	ranges, err := from.OwnedSlots(ctx)
	if err != nil {
		detail("its slots: " + err.Error())
		return false, err
	}
	for _, r := range ranges {
		for i, part := range split(r[0], r[1], len(others)) {
			mv := slotMove{key: env.Key, slot: part[0], from: from, to: others[i], method: method}
			what, moved, err := migrateAndWait(ctx, env, mv, part[0], part[1], moveBound(env.TTL))
			detail(fmt.Sprintf("slots %d-%d to %s by %s: %s", part[0], part[1], mv.to.Name, method, what))
			if !moved || err != nil {
				return false, err
			}
		}
	}
	return true, nil
}

// split cuts first..last into n contiguous ranges of nearly equal size
// (fewer when there are fewer slots than n).
func split(first, last, n int) [][2]int {
	size := last - first + 1
	var out [][2]int
	for i := range n {
		lo, hi := first+size*i/n, first+size*(i+1)/n-1
		if lo <= hi {
			out = append(out, [2]int{lo, hi})
		}
	}
	return out
}

// shardOf is the shard whose primary is p.
func shardOf(ctx context.Context, t *topology.Topology, p *topology.Node) (topology.Shard, error) {
	shards, err := t.Shards(ctx)
	if err != nil {
		return topology.Shard{}, err
	}
	for _, sh := range shards {
		if sh.Primary == p {
			return sh, nil
		}
	}
	return topology.Shard{}, fmt.Errorf("%s heads no shard", p.Name)
}

func names(nodes []*topology.Node) string {
	var out []string
	for _, n := range nodes {
		out = append(out, n.Name)
	}
	return strings.Join(out, ", ")
}
