package fault

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/lockcheck/lockcheck/history"
	"github.com/lockcheck/lockcheck/scenarios/internal/pace"
	"github.com/lockcheck/lockcheck/topology"
)

// KillPrimary is the article's failover race, made certain by design:
// the workload's acquires are held back and its holder hurried (its
// Gate) until the key is free on the primary and its replicas (within a
// lease: a stalled holder's lease ends by then), replication to every
// replica is stalled (each replica drops the packets of its primary:
// pausing the process would not do, since the kernel still buffers the
// stream for it), the acquires go on, and the fault SIGKILLs the primary
// right after the first lock taken there: a lock only the primary has.
// Its holder is held before its next call (race) until a second worker
// has taken the same lock from the promoted replica, which never saw it,
// or until its lease ends. Where a step cannot be had within its bound
// (the key never free, no lock on the primary alone, no second holder in
// the first one's lease), the fault window says so (Unmet) and the
// verdict says the race was not reproduced. Without a gate (a scripted
// run) the fault waits instead until the replicas' copy of the last lock
// has expired, and the script plays the acquires. The killed node comes
// back empty, or with its AOF when the run turns AOF on, and rejoins as a
// replica.
var KillPrimary Fault = killPrimary{faultBase{"kill-primary", failsOver, "holds the acquires back until the key is free everywhere (at most a lease), cuts replication, SIGKILLs the key's primary right after the next acquire and holds that holder until a second one takes the lock from the promoted replica (at most its lease); the killed node comes back (empty, or with its AOF) as a replica"}}

type killPrimary struct{ faultBase }

const killDetail = "replication cut off until a lock exists on the primary alone"

func (f killPrimary) Inject(ctx context.Context, env Env) (err error) {
	if env.Gate == nil {
		return f.scripted(ctx, env)
	}
	// The fault's moment comes between two holds: it waits for the lock
	// to be free on its primary (a release, a lease's end; at most two
	// leases) before it acts, and its window opens as it starts holding
	// acquires back, so the window spans the race and not a hold.
	awaitFree(ctx, env.Topo, env.Key, false, 2*env.TTL)
	win, end := env.openWindow(f.name, nil, killDetail)
	defer end()
	env.Gate.shut()
	defer env.Gate.reopen()
	limit := env.TTL + 2*time.Second
	if !awaitFree(ctx, env.Topo, env.Key, true, limit) {
		if ctx.Err() == nil {
			env.unmet(win, "%s was still held on its primary or a replica %s after the acquires were held back", env.Key, limit)
		}
		return nil
	}
	replicas, heal := cutReplication(ctx, env)
	defer func() { err = errors.Join(err, heal()) }()
	if len(replicas) == 0 {
		env.unmet(win, "no replica could be cut off from its primary")
		return nil
	}
	r := newRace(env)
	defer r.done()
	env.Gate.reopen()
	caught := r.catch(ctx, func(op history.Op) bool {
		return absentOnReplicas(ctx, env.Topo, replicas, op.Key)
	}, limit)
	if !caught {
		if ctx.Err() == nil {
			env.unmet(win, "no acquire landed on the primary alone within %s of the replication cut", limit)
		}
		return nil
	}
	key := r.first.Key
	old, np, err := f.failover(ctx, env, win, key, len(replicas), true, heal)
	if old == nil {
		return err
	}
	if err == nil {
		if waited, ok := r.second(ctx); !ok && ctx.Err() == nil {
			env.unmet(win, "no other worker took %s from %s within the first holder's lease (%s after the promotion)", key, np.Name, waited.Round(100*time.Millisecond))
		}
	} else {
		r.done()
		env.unmet(win, "%v", err)
	}
	return errors.Join(err, f.rejoin(ctx, env, old))
}

// scripted is kill-primary in a script: the cut first, then the window
// (a script acquires once it opens), then the kill after the script's
// acquire once the replicas' copy of any older lock is gone.
func (f killPrimary) scripted(ctx context.Context, env Env) (err error) {
	replicas, heal := cutReplication(ctx, env)
	defer func() { err = errors.Join(err, heal()) }()
	win, end := env.openWindow(f.name, nil, killDetail)
	defer end()
	if env.From == 0 {
		env.From = env.Rec.Now()
	}
	// The lock must be new to the replicas: a key they still hold from
	// before the cut (the previous holder's, released on the primary
	// alone) would keep the lock taken after the failover.
	key, landed := awaitAcquire(ctx, env, func(key string) bool {
		return absentOnReplicas(ctx, env.Topo, replicas, key)
	}, max(2*env.TTL, 5*time.Second))
	if !landed {
		key = env.Key
	}
	old, _, err := f.failover(ctx, env, win, key, len(replicas), landed, heal)
	if old == nil {
		return err
	}
	return errors.Join(err, f.rejoin(ctx, env, old))
}

// failover SIGKILLs key's primary (named in window win), heals the
// replication links and waits for a replica's promotion. old is nil when
// nothing was killed; err says what went wrong after the kill too.
func (f killPrimary) failover(ctx context.Context, env Env, win int, key string, cut int, landed bool, heal func() error) (old, promoted *topology.Node, err error) {
	old, err = env.Topo.Primary(ctx, key)
	if err != nil {
		return nil, nil, fmt.Errorf("kill-primary: %w", err)
	}
	if err := old.Kill(ctx); err != nil {
		return nil, nil, err
	}
	env.Log.Info("killed primary", "node", old.Name, "key", key, "after_acquire", landed)
	env.Rec.FaultTarget(win, old.Name, fmt.Sprintf("%d replicas cut off; SIGKILL after an acquire of %s (landed: %v)", cut, key, landed))
	if err := heal(); err != nil {
		return old, nil, err
	}
	promoted, err = newPrimary(ctx, env.Topo, key, old, 30*time.Second)
	if err == nil {
		env.Rec.FaultPromoted(win, promoted.Name)
	}
	return old, promoted, err
}

// rejoin restarts the killed node (with its AOF when the run has one) and
// waits until it serves as a replica.
func (f killPrimary) rejoin(ctx context.Context, env Env, old *topology.Node) error {
	cctx, cancel := cleanup(ctx)
	defer cancel()
	if err := old.Restart(cctx, env.AOF); err != nil {
		return err
	}
	return awaitRole(cctx, old, topology.RoleReplica, 30*time.Second)
}

// cutReplication stalls replication everywhere a lock may land: the
// replicas of every primary (one primary in Sentinel, three in a
// cluster), all at once. It returns the replicas cut off and the function
// that heals them (once; also after ctx ended).
func cutReplication(ctx context.Context, env Env) ([]*topology.Node, func() error) {
	var cuts []cut
	for _, n := range env.Topo.Servers() {
		if r, err := n.Role(ctx); err == nil && r == topology.RolePrimary {
			cuts = append(cuts, cutsOf(ctx, env.Topo, n)...)
		}
	}
	replicas := cutAll(ctx, cuts)
	env.Log.Info("replication cut", "replicas", len(replicas))
	healed := false
	return replicas, func() error {
		if healed {
			return nil
		}
		healed = true
		cctx, cancel := cleanup(ctx)
		defer cancel()
		return healAll(cctx, replicas)
	}
}

// awaitFree waits until key is not on its primary, and with replicas on
// no replica of it either (its holder released it, or it expired, and
// replication carried that), or limit passes; it says which.
func awaitFree(ctx context.Context, t *topology.Topology, key string, replicas bool, limit time.Duration) bool {
	p, err := t.Primary(ctx, key)
	if err != nil {
		return false
	}
	nodes := []*topology.Node{p}
	if replicas {
		nodes = append(nodes, replicasOf(ctx, t, p)...)
	}
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
			_, err = p.Do(ctx, "SET", settleKey(env.Key), "1")
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
