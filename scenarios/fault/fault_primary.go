package fault

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/lockcheck/lockcheck/scenarios/internal/pace"
	"github.com/lockcheck/lockcheck/topology"
)

// KillPrimary is the article's failover race, made likely by design:
// the workload's acquires are held back and its holder hurried (its
// Gate) until the key is free on the primary and its replicas,
// replication to every replica is stalled (each replica drops the
// packets of its primary: pausing the process would not do, since the
// kernel still buffers the stream for it), the acquires go on, and the
// fault SIGKILLs the primary right after the first lock taken there: a lock only the primary has. Sentinel or the
// cluster promotes a replica that never saw it and holds no copy of an
// older lock either, so the first client to try on the new primary takes
// the same lock. Without a gate (a scripted run) the fault waits instead
// until the replicas' copy of the last lock has expired. The killed node
// comes back empty, or with its AOF when the run turns AOF on, and rejoins
// as a replica.
var KillPrimary Fault = killPrimary{faultBase{"kill-primary", failsOver, "holds the acquires back until the key is free everywhere, cuts replication, and SIGKILLs the key's primary right after the next acquire: a replica that never saw the lock is promoted; the killed node comes back (empty, or with its AOF) as a replica"}}

type killPrimary struct{ faultBase }

func (f killPrimary) Inject(ctx context.Context, env Env) (err error) {
	const detail = "replication cut off until a lock exists on the primary alone"
	win, end := -1, func() {}
	defer func() { end() }()
	free := false
	if env.Gate != nil {
		// The window opens as the fault starts holding acquires back.
		win, end = env.openWindow(f.name, nil, detail)
		env.Gate.shut()
		defer env.Gate.reopen()
		free = awaitFree(ctx, env.Topo, env.Key, max(2*env.TTL, 5*time.Second))
	}
	// Stall replication everywhere a lock may land: the replicas of every
	// primary (one primary in Sentinel, three in a cluster), all at once.
	var cuts []cut
	for _, n := range env.Topo.Servers() {
		if r, err := n.Role(ctx); err == nil && r == topology.RolePrimary {
			cuts = append(cuts, cutsOf(ctx, env.Topo, n)...)
		}
	}
	replicas := cutAll(ctx, cuts)
	env.Log.Info("replication cut", "replicas", len(replicas), "key_free", free)
	if env.Gate == nil {
		// A script acquires once the window opens: only after the cut.
		win, end = env.openWindow(f.name, nil, detail)
	}
	paused := replicas
	defer func() {
		cctx, cancel := cleanup(ctx)
		defer cancel()
		err = errors.Join(err, healAll(cctx, paused))
	}()
	if env.From == 0 {
		env.From = env.Rec.Now() // the acquires the gate let go count
	}
	env.Gate.reopen()
	// The lock must be new to the replicas: a key they still hold from
	// before the cut (the previous holder's, released on the primary
	// alone) would keep the lock taken after the failover.
	key, landed := awaitAcquire(ctx, env, func(key string) bool {
		return absentOnReplicas(ctx, env.Topo, replicas, key)
	}, max(2*env.TTL, 5*time.Second))
	if !landed {
		key = env.Key
	}
	old, err := env.Topo.Primary(ctx, key)
	if err != nil {
		return fmt.Errorf("kill-primary: %w", err)
	}
	if err := old.Kill(ctx); err != nil {
		return err
	}
	env.Log.Info("killed primary", "node", old.Name, "key", key, "after_acquire", landed)
	env.Rec.FaultTarget(win, old.Name, fmt.Sprintf("%d replicas cut off with %s free everywhere (%v); SIGKILL after an acquire of %s (landed: %v)",
		len(replicas), env.Key, free, key, landed))
	cctx, cancel := cleanup(ctx)
	err = healAll(cctx, paused)
	cancel()
	paused = nil
	if err != nil {
		return err
	}
	np, perr := newPrimary(ctx, env.Topo, key, old, 30*time.Second)
	if perr == nil {
		env.Rec.FaultPromoted(win, np.Name)
	}
	cctx, cancel = cleanup(ctx)
	defer cancel()
	if rerr := old.Restart(cctx, env.AOF); rerr != nil {
		return errors.Join(perr, rerr)
	}
	return errors.Join(perr, awaitRole(cctx, old, topology.RoleReplica, 30*time.Second))
}

// awaitFree waits until key is on neither its primary nor any replica of
// it (its holder released it, or it expired, and replication carried
// that), or limit passes; it says which.
func awaitFree(ctx context.Context, t *topology.Topology, key string, limit time.Duration) bool {
	p, err := t.Primary(ctx, key)
	if err != nil {
		return false
	}
	nodes := append([]*topology.Node{p}, replicasOf(ctx, t, p)...)
	if t.Kind == topology.Cluster {
		for _, r := range nodes[1:] {
			r.Do(ctx, "READONLY")
		}
	}
	return pace.Poll(ctx, limit, 5*time.Millisecond, func() bool {
		for _, n := range nodes {
			if v, err := n.Do(ctx, "EXISTS", key); err != nil || v != "0" {
				return false
			}
		}
		return true
	}) == nil
}

// Failover is a clean, operator-started failover: SENTINEL FAILOVER, or
// CLUSTER FAILOVER on a replica of the key's primary.
var Failover Fault = failover{faultBase{"failover", failsOver, "an operator's clean failover: SENTINEL FAILOVER, or CLUSTER FAILOVER on a replica of the key's primary; over once the old primary serves as a replica"}}

type failover struct{ faultBase }

func (f failover) Inject(ctx context.Context, env Env) error {
	old, err := env.Topo.Primary(ctx, env.Key)
	if err != nil {
		return fmt.Errorf("failover: %w", err)
	}
	win, end := env.openWindow(f.name, old, "")
	defer end()
	if env.Topo.Kind == topology.Sentinel {
		_, err = env.Topo.Sentinels()[0].Do(ctx, "SENTINEL", "FAILOVER", topology.MasterSet)
	} else {
		replicas := replicasOf(ctx, env.Topo, old)
		if len(replicas) == 0 {
			return fmt.Errorf("failover: %s has no replica", old.Name)
		}
		_, err = replicas[0].Do(ctx, "CLUSTER", "FAILOVER")
	}
	if err != nil {
		return fmt.Errorf("failover: %w", err)
	}
	np, err := newPrimary(ctx, env.Topo, env.Key, old, 30*time.Second)
	if err != nil {
		return err
	}
	env.Rec.FaultPromoted(win, np.Name)
	cctx, cancel := cleanup(ctx)
	defer cancel()
	return awaitRole(cctx, old, topology.RoleReplica, 30*time.Second)
}

// PausePrimary stops the key's primary with SIGSTOP for longer than the
// failure detection time, then continues it: the old primary wakes up next
// to a new one, and clients still connected to it may be served by it.
var PausePrimary Fault = pausePrimary{faultBase{"pause-primary", replicated, "SIGSTOPs the key's primary for 4 s, past failure detection, then SIGCONTs it: it wakes beside a new primary"}}

type pausePrimary struct{ faultBase }

func (f pausePrimary) Inject(ctx context.Context, env Env) error {
	old, err := env.Topo.Primary(ctx, env.Key)
	if err != nil {
		return fmt.Errorf("pause-primary: %w", err)
	}
	stall := 4 * time.Second
	end := env.window(f.name, old, "SIGSTOP for "+stall.String())
	defer end()
	if err := old.Pause(ctx); err != nil {
		return err
	}
	serr := pace.Hold(ctx, stall)
	cctx, cancel := cleanup(ctx)
	defer cancel()
	if err := old.Resume(cctx); err != nil {
		return err
	}
	if serr != nil {
		return nil
	}
	return settle(ctx, env)
}

// PartitionPrimary cuts the key's primary off from its replicas and the
// sentinels while clients on the host still reach it, for longer than the
// failure detection time, then heals.
var PartitionPrimary Fault = partitionPrimary{faultBase{"partition-primary", replicated, "cuts the key's primary off from its replicas and sentinels for 4 s while clients still reach it, then heals"}}

type partitionPrimary struct{ faultBase }

func (f partitionPrimary) Inject(ctx context.Context, env Env) error {
	old, err := env.Topo.Primary(ctx, env.Key)
	if err != nil {
		return fmt.Errorf("partition-primary: %w", err)
	}
	stall := 4 * time.Second
	end := env.window(f.name, old, "cut off from its peers for "+stall.String())
	defer end()
	if err := old.Partition(ctx, topology.FromPeers); err != nil {
		return err
	}
	return holdThenHeal(ctx, env, old, stall)
}

// holdThenHeal keeps node n's partition for stall, heals it (also when ctx
// ends) and waits until the key has a writable primary again.
func holdThenHeal(ctx context.Context, env Env, n *topology.Node, stall time.Duration) error {
	serr := pace.Hold(ctx, stall)
	cctx, cancel := cleanup(ctx)
	defer cancel()
	if err := n.Heal(cctx); err != nil {
		return err
	}
	if serr != nil {
		return nil
	}
	return settle(ctx, env)
}

// settle waits until the key has a primary that answers, after a fault
// that may have started a failover.
func settle(ctx context.Context, env Env) error {
	var err error
	found := pace.Poll(ctx, 30*time.Second, 200*time.Millisecond, func() bool {
		var p *topology.Node
		if p, err = env.Topo.Primary(ctx, env.Key); err == nil {
			_, err = p.Do(ctx, "SET", "lockcheck:settle", "1")
		}
		return err == nil
	})
	if found == pace.ErrLimit {
		return fmt.Errorf("no writable primary 30 s after the fault: %w", err)
	}
	return found
}

func awaitRole(ctx context.Context, n *topology.Node, want topology.Role, limit time.Duration) error {
	var r topology.Role
	var err error
	found := pace.Poll(ctx, limit, 200*time.Millisecond, func() bool {
		r, err = n.Role(ctx)
		return err == nil && r == want
	})
	if found == pace.ErrLimit {
		return fmt.Errorf("%s is %s, not %s, %s after the fault (%v)", n.Name, r, want, limit, err)
	}
	return found
}

// cut is one replication link to stop.
type cut struct{ replica, primary *topology.Node }

// cutsOf are the links from primary to each of its replicas.
func cutsOf(ctx context.Context, t *topology.Topology, primary *topology.Node) []cut {
	var cuts []cut
	for _, r := range replicasOf(ctx, t, primary) {
		cuts = append(cuts, cut{replica: r, primary: primary})
	}
	return cuts
}

// cutAll stops every link at once (each cut is a command run in the
// replica's container, about 0.1 s) and returns the replicas cut off.
func cutAll(ctx context.Context, cuts []cut) []*topology.Node {
	done := make([]bool, len(cuts))
	var wg sync.WaitGroup
	for i, c := range cuts {
		wg.Go(func() { done[i] = c.replica.Cut(ctx, c.primary) == nil })
	}
	wg.Wait()
	var out []*topology.Node
	for i, c := range cuts {
		if done[i] {
			out = append(out, c.replica)
		}
	}
	return out
}

// absentOnReplicas reports whether no replica that would take over key's
// slot holds key (a replica answers reads for its own copy; expired keys
// read as missing).
func absentOnReplicas(ctx context.Context, t *topology.Topology, replicas []*topology.Node, key string) bool {
	p, err := t.Primary(ctx, key)
	if err != nil {
		return false
	}
	for _, r := range replicasOf(ctx, t, p) {
		if !slices.Contains(replicas, r) {
			return false
		}
		if t.Kind == topology.Cluster {
			r.Do(ctx, "READONLY")
		}
		if n, err := r.Do(ctx, "EXISTS", key); err != nil || n != "0" {
			return false
		}
	}
	return true
}

func healAll(ctx context.Context, nodes []*topology.Node) error {
	var errs []error
	for _, n := range nodes {
		errs = append(errs, n.Heal(ctx))
	}
	return errors.Join(errs...)
}
