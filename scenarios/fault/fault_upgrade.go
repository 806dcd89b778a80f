package fault

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/lockcheck/lockcheck/history"
	"github.com/lockcheck/lockcheck/scenarios/internal/pace"
	"github.com/lockcheck/lockcheck/topology"
)

// RollingUpgrade moves every node from the run's build onto Env.UpgradeTo
// one at a time while the workload runs, the way an operator upgrades (or
// rolls back) a deployment: a shard's replicas first, each reinstalled
// with its data (topology.Node.Reinstall); then a failover onto an
// upgraded replica (SENTINEL FAILOVER, or CLUSTER FAILOVER on the shard's
// replica); then the old primary; with Sentinel, the sentinels last. A
// replicated topology has no failover: its primary is reinstalled in
// place while its clients wait. It is the one fault of a run that names
// Scenario.UpgradeTo, and the run ends with it.
//
// Each step is a window of its own, named rolling-upgrade with the step
// in its detail: it holds the step, the wait for a healthy topology
// (UpgradeHealthWait at most: a replica that cannot read its new
// primary's data stays down, and the step says so) and UpgradeHold more,
// and longer until a release has returned in it (UpgradeHealthWait more
// at most, else the window says it was unmet), so that the workload meets
// each mixed state. The window records every
// server as the step left it (history.NodeState): its version, role and
// link, whether it can lead, and which of the client's lock commands it
// lacks. A window before the first step and one after the last hold the
// starting and the final state. A server that does not come up on the
// new build with its data (it cannot load it: an older build reading a
// newer snapshot) is started again empty, as an operator would, so that
// it resynchronises from its primary; whether that works the step's
// links show. A step that fails otherwise (a server that does not start
// at all, a failover refused) puts a moved node back on its old build
// and ends the upgrade there.
var RollingUpgrade Fault = rollingUpgrade{faultBase{"rolling-upgrade", []topology.Kind{topology.Replicated, topology.Sentinel, topology.Cluster}, "moves every node onto another build one at a time (replicas, a failover, the old primary, the sentinels); only through lockcheck upgrade, and the run ends with its last step"}}

// UpgradeHold is how long each upgrade step's state lasts at least once
// the topology is healthy again; two TTLs when that is longer, so that
// every step sees holds begin and end.
var UpgradeHold = 5 * time.Second

// UpgradeHealthWait bounds the wait for a healthy topology after a step.
var UpgradeHealthWait = 30 * time.Second

type rollingUpgrade struct{ faultBase }

// upgradeStep is one step of the plan.
type upgradeStep struct {
	what   string
	target *topology.Node
	act    func(ctx context.Context) error
	// moves says act reinstalls target (on failure it goes back).
	moves bool
}

func (f rollingUpgrade) Inject(ctx context.Context, env Env) error {
	from := env.Topo.Build.Name
	if env.UpgradeTo == "" {
		return fmt.Errorf("%s: the run names no build to upgrade to", f.name)
	}
	newImage, ok := env.Topo.ImageOf(env.UpgradeTo)
	if !ok {
		return fmt.Errorf("%s: no image of %s was obtained for this topology", f.name, env.UpgradeTo)
	}
	plan, err := upgradePlan(ctx, env, newImage)
	if err != nil {
		return fmt.Errorf("%s: %w", f.name, err)
	}
	u := upgrader{env: env, name: f.name, total: len(plan)}
	u.record(ctx, nil, fmt.Sprintf("before: every node on %s", from), nil)
	for _, st := range plan {
		if err := u.record(ctx, st.target, st.what, func(ctx context.Context) error { return u.apply(ctx, st) }); err != nil {
			return err
		}
	}
	u.record(ctx, nil, fmt.Sprintf("after: every node on %s", env.UpgradeTo), nil)
	return nil
}

// upgradePlan lists the steps for the topology as it is now.
func upgradePlan(ctx context.Context, env Env, image string) ([]upgradeStep, error) {
	t := env.Topo
	shards, err := t.Shards(ctx)
	if err != nil {
		return nil, err
	}
	to := env.UpgradeTo
	reinstall := func(n *topology.Node, role string) upgradeStep {
		return upgradeStep{what: fmt.Sprintf("%s (%s) on %s", n.Name, role, to), target: n, moves: true,
			act: func(ctx context.Context) error { return reinstall(ctx, n, image) }}
	}
	var plan []upgradeStep
	for i, sh := range shards {
		if env.Reshard {
			steps, err := reshardSteps(t, shards, i, reinstall)
			if err != nil {
				return nil, err
			}
			plan = append(plan, steps...)
			continue
		}
		for _, r := range sh.Replicas {
			plan = append(plan, reinstall(r, "replica"))
		}
		switch t.Kind {
		case topology.Replicated:
			plan = append(plan, reinstall(sh.Primary, "primary, in place"))
			continue
		case topology.Sentinel:
			plan = append(plan, upgradeStep{what: "SENTINEL FAILOVER onto an upgraded replica", target: sh.Primary,
				act: func(ctx context.Context) error { return sentinelFailover(ctx, t, sh.Primary) }})
		case topology.Cluster:
			if len(sh.Replicas) == 0 {
				return nil, fmt.Errorf("%s has no replica to fail over to", sh.Primary.Name)
			}
			r := sh.Replicas[0]
			plan = append(plan, upgradeStep{what: fmt.Sprintf("CLUSTER FAILOVER onto %s", r.Name), target: r,
				act: func(ctx context.Context) error { return clusterFailover(ctx, r, sh.Primary) }})
		}
		plan = append(plan, reinstall(sh.Primary, "old primary"))
	}
	for _, s := range t.Sentinels() {
		plan = append(plan, reinstall(s, "sentinel"))
	}
	return plan, nil
}

// reinstall moves n onto image with its data, or when its server cannot
// start with it, empty (a server's data, never a sentinel's state).
func reinstall(ctx context.Context, n *topology.Node, image string) error {
	err := n.Reinstall(ctx, image, true)
	if err == nil || n.Sentinel {
		return err
	}
	if eerr := n.Reinstall(ctx, image, false); eerr != nil {
		return fmt.Errorf("%w; started empty: %v", err, eerr)
	}
	return &startedEmpty{err}
}

// startedEmpty is a reinstall whose node could not load its data and
// runs empty: noted in the step, not an end of the upgrade.
type startedEmpty struct{ err error }

func (e *startedEmpty) Error() string {
	return e.err.Error() + "; started again without its data, to resynchronise from its primary"
}

func sentinelFailover(ctx context.Context, t *topology.Topology, old *topology.Node) error {
	if _, err := t.Sentinels()[0].Do(ctx, "SENTINEL", "FAILOVER", topology.MasterSet); err != nil {
		return fmt.Errorf("SENTINEL FAILOVER: %w", err)
	}
	return awaitRole(ctx, old, topology.RoleReplica, 30*time.Second)
}

func clusterFailover(ctx context.Context, replica, old *topology.Node) error {
	if _, err := replica.Do(ctx, "CLUSTER", "FAILOVER"); err != nil {
		return fmt.Errorf("CLUSTER FAILOVER on %s: %w", replica.Name, err)
	}
	if err := awaitRole(ctx, replica, topology.RolePrimary, 30*time.Second); err != nil {
		return err
	}
	return awaitRole(ctx, old, topology.RoleReplica, 30*time.Second)
}

// upgrader runs the plan's steps, each in its window.
type upgrader struct {
	env   Env
	name  string
	step  int
	total int
}

// record runs one step (act nil: a state before or after the upgrade) in
// its window: act, the wait for health, the hold (until a release has
// returned in the window, too), the servers' states.
// It returns act's error, which ends the upgrade.
func (u *upgrader) record(ctx context.Context, target *topology.Node, what string, act func(context.Context) error) error {
	detail := what
	if act != nil {
		u.step++
		detail = fmt.Sprintf("step %d of %d: %s", u.step, u.total, what)
	}
	i, end := u.env.openWindow(u.name, target, detail)
	defer end()
	from := u.env.Rec.Now()
	var err error
	if act != nil {
		err = act(ctx)
		var empty *startedEmpty
		switch {
		case errors.As(err, &empty):
			detail += "; " + err.Error()
			err = nil
		case err != nil:
			detail += "; failed: " + err.Error()
		}
	}
	if ctx.Err() == nil {
		if herr := u.env.Topo.AwaitHealthy(ctx, UpgradeHealthWait); herr != nil {
			detail += "; " + herr.Error()
		} else if err == nil {
			pace.Hold(ctx, max(UpgradeHold, 2*u.env.TTL))
			if !u.awaitRelease(ctx, from, UpgradeHealthWait) && ctx.Err() == nil {
				u.env.unmet(i, "no release returned in the step's window, held %s past its hold for one", UpgradeHealthWait)
			}
		}
	}
	tgt := ""
	if target != nil {
		tgt = target.Name
	}
	u.env.Rec.FaultTarget(i, tgt, detail)
	sctx, cancel := cleanup(ctx)
	defer cancel()
	u.env.Rec.FaultNodes(i, u.states(sctx))
	u.env.Log.Info("upgrade step", "detail", detail)
	return err
}

// apply runs a step; a reinstall that failed puts the node back on the
// image it ran.
func (u *upgrader) apply(ctx context.Context, st upgradeStep) error {
	before := st.target.Image()
	err := st.act(ctx)
	var empty *startedEmpty
	if err == nil || !st.moves || errors.As(err, &empty) {
		return err
	}
	cctx, cancel := cleanup(ctx)
	defer cancel()
	if berr := st.target.Reinstall(cctx, before, true); berr != nil {
		return fmt.Errorf("%w; putting it back on %s failed too: %v", err, before, berr)
	}
	return fmt.Errorf("%w; %s is back on %s", err, st.target.Name, before)
}

// states reads every server as it is now.
func (u *upgrader) states(ctx context.Context) []history.NodeState {
	var out []history.NodeState
	for _, n := range u.env.Topo.Servers() {
		out = append(out, nodeState(ctx, u.env, n))
	}
	return out
}

func nodeState(ctx context.Context, env Env, n *topology.Node) history.NodeState {
	st := history.NodeState{Name: n.Name}
	qctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	info, err := n.Info(qctx, "all")
	if err != nil {
		st.Error = err.Error()
		return st
	}
	st.Version = info[env.Topo.Build.VersionField()]
	if st.Version == "" {
		st.Version = info["redis_version"]
	}
	switch info["role"] {
	case "master":
		st.Role, st.CanLead = string(topology.RolePrimary), true
	case "slave":
		st.Role, st.Link = string(topology.RoleReplica), info["master_link_status"]
		if p := env.Topo.NodeAt(info["master_host"] + ":" + info["master_port"]); p != nil {
			st.Following = p.Name
		}
		st.CanLead = canLead(env.Topo.Kind, info)
	}
	if env.Probe != nil {
		missing, known, err := env.Probe(qctx, n)
		switch {
		case err != nil:
			st.Error = "probe: " + err.Error()
		case known:
			st.Probed, st.Missing = true, missing
		}
	}
	return st
}

// canLead says whether a replica (its INFO) may be promoted by its
// topology: Sentinel skips replicas of priority 0, a cluster promotes
// any replica, a replicated topology none (nothing fails it over).
func canLead(kind topology.Kind, info map[string]string) bool {
	switch kind {
	case topology.Cluster:
		return true
	case topology.Sentinel:
		return info["slave_priority"] != "0"
	}
	return false
}
