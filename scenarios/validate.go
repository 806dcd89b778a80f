package scenarios

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/lockcheck/lockcheck/scenarios/fault"
	"github.com/lockcheck/lockcheck/scenarios/lockclient"
	"github.com/lockcheck/lockcheck/topology"
)

// Validate reports the first setting of a resolved Scenario that cannot
// run, in one line that says how to fix it. It needs no engine: builds
// are checked when the topology starts.
func (s Scenario) Validate() error {
	// first, each setting alone: what follows sizes things by these
	// (LockKeys)
	for _, st := range Settings() {
		if st.Check == nil {
			continue
		}
		if err := st.Check(st, s); err != nil {
			return err
		}
	}
	if s.Server == "" {
		return errors.New("no server build: name one, e.g. valkey-9.1 (lockcheck images lists them)")
	}
	if _, err := topology.ParseKind(string(s.Topology)); err != nil {
		return err
	}
	if err := lockclient.ValidateKind(s.Client); err != nil {
		return err
	}
	if err := s.validateRedlock(); err != nil {
		return err
	}
	if s.MinReplicas < 0 || s.MinReplicasMaxLag < 0 || s.MinReplicasMaxLag%time.Second != 0 {
		return fmt.Errorf("min-replicas-to-write %d, min-replicas-max-lag %s: want a count and whole seconds", s.MinReplicas, s.MinReplicasMaxLag)
	}
	if s.MinReplicasMaxLag > 0 && s.MinReplicas == 0 {
		return fmt.Errorf("min-replicas-max-lag %s without min-replicas-to-write does nothing: add --min-replicas-to-write", s.MinReplicasMaxLag)
	}
	// replicas per primary: a bigger min-replicas-to-write refuses every write
	perPrimary := map[topology.Kind]int{topology.Replicated: 2, topology.Sentinel: 2, topology.Cluster: 1}[s.Topology]
	if s.MinReplicas > perPrimary {
		return fmt.Errorf("min-replicas-to-write %d on a %s topology (%d replicas per primary) refuses every write: choose at most %d", s.MinReplicas, s.Topology, perPrimary, perPrimary)
	}
	if s.TTL < 10*time.Millisecond {
		return fmt.Errorf("TTL %s: want at least 10ms", s.TTL)
	}
	if s.WorkMax < s.WorkMin {
		return fmt.Errorf("work max %s is shorter than work min %s", s.WorkMax, s.WorkMin)
	}
	for _, name := range s.Faults {
		f, err := fault.Lookup(name)
		if err != nil {
			return err
		}
		if !f.Available(s.Topology) {
			var fits []string
			for _, k := range append(topology.Kinds(), topology.Redlock) {
				if f.Available(k) {
					fits = append(fits, string(k))
				}
			}
			return fmt.Errorf("fault %s does not fit a %s topology: choose %s", name, s.Topology, strings.Join(fits, " or "))
		}
	}
	if err := s.validateEvents(); err != nil {
		return err
	}
	if s.Wait.Enabled() {
		if s.Wait.AOF && !s.AOF {
			return errors.New("WAITAOF needs AOF on the servers: add --aof")
		}
		if s.Wait.Replicas > 0 && s.Topology == topology.Standalone {
			return fmt.Errorf("WAIT for %d replicas on a standalone server always falls short: choose a topology with replicas", s.Wait.Replicas)
		}
		if s.Wait.OnShort != lockclient.WaitGoOn && s.Wait.OnShort != lockclient.WaitRelease {
			return fmt.Errorf("on-short %q: want %s or %s", s.Wait.OnShort, lockclient.WaitGoOn, lockclient.WaitRelease)
		}
	}
	for node, b := range s.NodeBuilds {
		if !strings.HasPrefix(node, "n") {
			return fmt.Errorf("node build %s=%s: nodes are named n1, n2, ...", node, b)
		}
	}
	return s.validateUpgrade()
}

// validateEvents checks a fixed fault schedule: each step one of the
// scenario's faults, on one of its keys, within its duration.
func (s Scenario) validateEvents() error {
	keys := s.LockKeys()
	for _, e := range s.Events {
		switch {
		case !slices.Contains(s.Faults, e.Fault):
			return fmt.Errorf("fault step %s: %s is not among the scenario's faults (%s): add it with --fault", e, e.Fault, strings.Join(s.Faults, ", "))
		case !slices.Contains(keys, e.Key):
			return fmt.Errorf("fault step %s: key %s is not one of the run's %d lock keys (%s)", e, e.Key, len(keys), strings.Join(keys, ", "))
		case e.At < 0 || e.At >= s.Duration:
			return fmt.Errorf("fault step %s: offset outside the run's %s: lengthen --duration or move the step", e, s.Duration)
		}
	}
	return nil
}

// validateRedlock checks the fields of a topology of independent
// primaries: a client that locks one server would lock the first node
// alone there.
func (s Scenario) validateRedlock() error {
	if s.Fsync != "" {
		if _, err := topology.ParseFsync(string(s.Fsync)); err != nil {
			return err
		}
		if !s.AOF {
			return fmt.Errorf("fsync %s needs AOF on the servers: add --aof", s.Fsync)
		}
	}
	if s.Topology != topology.Redlock {
		if s.Nodes != 0 {
			return fmt.Errorf("nodes %d: only a redlock topology takes a node count", s.Nodes)
		}
		return nil
	}
	if s.Nodes < 0 || s.Nodes > 9 {
		return fmt.Errorf("nodes %d: a redlock topology has 1 to 9 nodes", s.Nodes)
	}
	if !lockclient.LocksMajority(s.Client) {
		return fmt.Errorf("client %s locks one server, and a redlock topology is independent servers: choose redlock, redsync, a mutant-redlock-* kind or an external adapter", s.Client)
	}
	if len(s.NodeBuilds) > 0 || s.UpgradeTo != "" || s.Wait.Enabled() {
		return errors.New("a redlock topology has no replicas: drop node builds, upgrades and WAIT")
	}
	return nil
}

// validateUpgrade checks the fields a rolling upgrade reads.
func (s Scenario) validateUpgrade() error {
	named := slices.Contains(s.Faults, fault.RollingUpgrade.Name())
	switch {
	case s.UpgradeTo == "" && named:
		return fmt.Errorf("fault %s needs a build to upgrade to: run lockcheck upgrade --from BUILD --to BUILD", fault.RollingUpgrade.Name())
	case s.UpgradeTo == "" && s.Reshard:
		return errors.New("reshard moves slots between the steps of a rolling upgrade: run it with lockcheck upgrade --from BUILD --to BUILD --topology cluster --reshard")
	case s.UpgradeTo == "":
		return nil
	case s.Reshard && s.Topology != topology.Cluster:
		return fmt.Errorf("reshard moves slots, and a %s topology has none: choose --topology cluster, or drop --reshard", s.Topology)
	case s.UpgradeTo == s.Server:
		return fmt.Errorf("upgrade from %s to %s: name two different builds", s.Server, s.UpgradeTo)
	case !fault.RollingUpgrade.Available(s.Topology):
		return fmt.Errorf("a rolling upgrade of a %s topology has no step: choose replicated, sentinel or cluster", s.Topology)
	case len(s.Faults) > 0 && !(len(s.Faults) == 1 && named):
		return fmt.Errorf("a rolling upgrade runs no other fault (%s): drop the faults", strings.Join(s.Faults, ", "))
	case len(s.NodeBuilds) > 0:
		return errors.New("a rolling upgrade starts every node on one build: drop the node builds")
	}
	from, ferr := topology.Lookup(s.Server)
	to, terr := topology.Lookup(s.UpgradeTo)
	if ferr == nil && terr == nil && from.Family != to.Family {
		return fmt.Errorf("upgrade from %s to %s: both builds must be of one family (%s, %s)", s.Server, s.UpgradeTo, from.Family, to.Family)
	}
	return nil
}
