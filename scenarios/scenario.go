package scenarios

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/lockcheck/lockcheck/scenarios/fault"
	"github.com/lockcheck/lockcheck/scenarios/lockclient"
	"github.com/lockcheck/lockcheck/topology"
)

// Scenario is every input that shapes one run: the servers, the client,
// the faults, the workload and the checker's one setting. A run's folder
// keeps it (scenario.json), so the folder alone replays the run; the CLI's
// flags, the matrix, the suites and bench all build one, and nothing else
// carries run settings.
//
// The zero value of a field takes the default WithDefaults gives it. Where
// the default is not "none" (stalls, pauses inside lock calls, late holds,
// abandons, observations), a negative value says none; faults, AOF and
// WAIT are off unless set.
type Scenario struct {
	// Server is the build every node runs (topology.Lookup, or a user's
	// own binary's name).
	Server string `json:"server"`
	// NodeBuilds runs some nodes on another build (node name, e.g. "n1",
	// to build name): a rolling upgrade caught half way.
	NodeBuilds map[string]string `json:"node_builds,omitempty"`
	// UpgradeTo, when set, makes the run a rolling upgrade: every node
	// moves from Server onto this build (an older one: a rollback), one at
	// a time while the workload runs (the rolling-upgrade fault, the run's
	// only fault), and the run ends with the upgrade's last step, Duration
	// at most.
	UpgradeTo string `json:"upgrade_to,omitempty"`
	// NodeConfig appends lines to one node's configuration (by name), e.g.
	// "replica-priority 0" so that Sentinel never promotes it.
	NodeConfig map[string][]string `json:"node_config,omitempty"`
	// Topology is standalone, replicated, sentinel or cluster (standalone).
	Topology topology.Kind `json:"topology"`
	// AOF runs every server with appendonly (appendfsync as Fsync says,
	// always by default), so a killed node comes back with its data.
	AOF bool `json:"aof,omitempty"`
	// Fsync is the appendfsync policy with AOF (always): what a node's
	// power loss keeps (topology.Node.Crash).
	Fsync topology.Fsync `json:"fsync,omitempty"`
	// Nodes is the number of independent primaries of a redlock topology
	// (3).
	Nodes int `json:"nodes,omitempty"`
	// MinReplicas is every server's min-replicas-to-write (0: off): a
	// primary refuses writes while fewer replicas than this have
	// acknowledged within MinReplicasMaxLag (its default, 10 s). The
	// article's mitigation on the server's side, beside WAIT on the
	// client's.
	MinReplicas       int           `json:"min_replicas_to_write,omitempty"`
	MinReplicasMaxLag time.Duration `json:"-"`
	// Client is the client kind (see Kinds), or "external:CMD" (native).
	Client string `json:"client"`
	// Fenced makes the resource check fences. Kinds that draw fences turn
	// it on themselves; set it for an external adapter that draws them.
	Fenced bool `json:"fenced,omitempty"`
	// Faults are drawn from by the seeded schedule (names, see Faults).
	Faults []string `json:"faults,omitempty"`
	// Events, when set, is the fault schedule itself, not the seed's draw:
	// each step's fault (one of Faults), offset and key. lockcheck shrink
	// writes it, to keep only the steps a violation needs.
	Events []fault.Event `json:"events,omitempty"`
	// UntilCovered ends the run once it has covered its goal
	// (CoverageGoal), Duration then only its bound: a passing gate pays
	// for what it must and no more.
	UntilCovered bool `json:"until_covered,omitempty"`
	// Duration bounds the workload (60 s).
	Duration time.Duration `json:"-"`
	// TTL is the lease every acquire and extend asks for (15 s): longer
	// than a failover, so that a lock lost with a primary is still
	// believed held when the new primary hands it out.
	TTL time.Duration `json:"-"`
	// Seed makes every worker's choices and the fault schedule
	// reproducible. 0 is a seed like any other here; the CLI picks one.
	Seed int64 `json:"seed"`
	// Clients is the number of workers (6); Keys the number of lock keys
	// they contend for (1: every lock is contended).
	Clients int `json:"clients"`
	Keys    int `json:"keys"`
	// WorkMin and WorkMax bound a hold's work time, drawn evenly on a log
	// scale (TTL/5 and TTL): from longer than a failover, so that a holder
	// whose lock was lost with the primary still believes in it when the
	// replica hands it out, to three extend periods. Longer holds would
	// keep the key taken for most of a run.
	WorkMin time.Duration `json:"-"`
	WorkMax time.Duration `json:"-"`
	// StallRate is the share of holds that stall for 1.2-2 TTL without
	// extending, like a GC pause: mid-work, just before an extend or just
	// before the release (0.6). An unfenced client's write after a stall
	// is stale whatever the server does, so a correct unfenced client
	// fails the resource check with stalls on (class stale-writes, which
	// the default expectation, lock-correct, allows). On by default: the
	// bugs that hurt in production show when a holder is slow at the
	// wrong moment.
	StallRate float64 `json:"stall_rate,omitempty"`
	// PauseRate is the share of holds frozen inside one lock operation
	// (0.7): for 1.2-2 TTL between its commands where it has several, or
	// after the server answered where it has one; half of the acquires'
	// pauses come before the command goes out and outlast the call's
	// deadline (Plan.PauseSlow), and extends get twice the acquires' or
	// the releases' share. Like a stall, it makes an unfenced
	// client's next write stale.
	PauseRate float64 `json:"pause_rate,omitempty"`
	// LateRate is the share of holds that extend and release near the
	// lease's end, 0.85-0.98 TTL after the last (0.1).
	LateRate float64 `json:"late_rate,omitempty"`
	// AbandonRate is the share of holds left without release, as by a
	// crashed holder (0.02).
	AbandonRate float64 `json:"abandon_rate,omitempty"`
	// ObserveEvery is the mean time between the observer's reads of a lock
	// key (PTTL and GET in one transaction) besides the read after every
	// OK acquire and extend (TTL/4).
	ObserveEvery time.Duration `json:"-"`
	// BackoffMin and BackoffMax bound the jittered pause between acquire
	// attempts (5 ms and TTL/4).
	BackoffMin time.Duration `json:"-"`
	BackoffMax time.Duration `json:"-"`
	// WriteGap is the unfenced resource's pause between read and write
	// (TTL/10): wide enough that two holders at once interleave their
	// read-modify-writes and lose increments.
	WriteGap time.Duration `json:"-"`
	// Wait asks for WAIT or WAITAOF after every acquire (off): the
	// article's mitigation, which narrows the failover window.
	Wait lockclient.WaitOptions `json:"wait,omitzero"`
	// FenceGap is a pause between SET and INCR in mutant-fence-outside,
	// standing in for a GC pause; FenceGapRandom makes half of those
	// pauses FenceGap and half none (off).
	FenceGap       time.Duration `json:"-"`
	FenceGapRandom bool          `json:"fence_gap_random,omitempty"`
	// ClockTolerance is how far a server's expiry may run ahead of the
	// harness clock before the checker calls it early (10 ms).
	ClockTolerance time.Duration `json:"-"`
	// CallTimeout bounds one lock call (1 s); an external adapter gets it
	// plus a grace to answer before it is replaced.
	CallTimeout time.Duration `json:"-"`
}

// None is the value of a share or interval that says "none" where the
// default is not.
const None = -1

// The default workload's shares of holds that stall and that are frozen
// inside a lock call: a quiet scenario sets both to None.
const (
	DefaultStallRate = 0.6
	DefaultPauseRate = 0.7
)

// Quiet turns off what makes a correct unfenced client's writes stale
// (stalls, pauses inside lock calls): the scenario the safe expectation
// is meant for.
func (s Scenario) Quiet() Scenario {
	s.StallRate, s.PauseRate = None, None
	return s
}

// WithDefaults fills every zero field with its default. It is the one
// table of defaults: lockcheck run's flags show these values, and a
// resolved Scenario (as in scenario.json) comes back unchanged.
func (s Scenario) WithDefaults() Scenario {
	if s.Topology == "" {
		s.Topology = topology.Standalone
	}
	if s.Client == "" {
		s.Client = "native"
	}
	setDuration(&s.Duration, 60*time.Second)
	setDuration(&s.TTL, 15*time.Second)
	if s.Clients == 0 {
		s.Clients = 6
	}
	if s.Keys == 0 {
		s.Keys = 1
	}
	setDuration(&s.WorkMin, s.TTL/5)
	setDuration(&s.WorkMax, s.TTL)
	if s.StallRate == 0 {
		s.StallRate = DefaultStallRate
	}
	if s.PauseRate == 0 {
		s.PauseRate = DefaultPauseRate
	}
	if s.LateRate == 0 {
		s.LateRate = 0.1
	}
	if s.AbandonRate == 0 {
		s.AbandonRate = 0.02
	}
	setDuration(&s.ObserveEvery, s.TTL/4)
	setDuration(&s.BackoffMin, 5*time.Millisecond)
	setDuration(&s.BackoffMax, max(s.TTL/4, s.BackoffMin))
	setDuration(&s.WriteGap, s.TTL/10)
	setDuration(&s.ClockTolerance, 10*time.Millisecond)
	setDuration(&s.CallTimeout, time.Second)
	if s.Wait.Enabled() && s.Wait.OnShort == "" {
		s.Wait.OnShort = lockclient.WaitGoOn
	}
	return s
}

func setDuration(d *time.Duration, def time.Duration) {
	if *d == 0 {
		*d = def
	}
}

// Validate reports the first setting that cannot run, in one line that
// says how to fix it. It needs no engine: builds are checked when the
// topology starts.
func (s Scenario) Validate() error {
	s = s.WithDefaults()
	// first: what follows sizes things by these (LockKeys)
	if err := s.validateSize(); err != nil {
		return err
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
	for name, v := range map[string]float64{"stall": s.StallRate, "pause": s.PauseRate, "late": s.LateRate, "abandon": s.AbandonRate} {
		if v > 1 || (v < 0 && v != None) {
			return fmt.Errorf("%s rate %g: want a share between 0 and 1", name, v)
		}
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

// ServerConfig are the configuration lines every server gets from the
// scenario's own settings.
func (s Scenario) ServerConfig() []string {
	if s.MinReplicas <= 0 {
		return nil
	}
	lines := []string{fmt.Sprintf("min-replicas-to-write %d", s.MinReplicas)}
	if s.MinReplicasMaxLag > 0 {
		lines = append(lines, fmt.Sprintf("min-replicas-max-lag %d", s.MinReplicasMaxLag/time.Second))
	}
	return lines
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
	case s.UpgradeTo == "":
		return nil
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

// FaultList looks up the scenario's faults by name.
func (s Scenario) FaultList() ([]fault.Fault, error) {
	if s.UpgradeTo != "" {
		return []fault.Fault{fault.RollingUpgrade}, nil
	}
	var out []fault.Fault
	for _, name := range s.Faults {
		f, err := fault.Lookup(name)
		if err != nil {
			return nil, err
		}
		out = append(out, f)
	}
	return out, nil
}

// LockKeys are the keys the workers contend for.
func (s Scenario) LockKeys() []string {
	s = s.WithDefaults()
	keys := make([]string, s.Keys)
	for i := range keys {
		keys[i] = LockKey(i)
	}
	return keys
}

// Schedule is the fault schedule the seed gives (see Schedule).
func (s Scenario) Schedule() ([]fault.Event, error) {
	s = s.WithDefaults()
	faults, err := s.FaultList()
	if err != nil {
		return nil, err
	}
	if s.UpgradeTo != "" {
		// one upgrade from the start, so that its first window (every
		// node on the old build) holds the run's first operations too
		return []fault.Event{{At: 0, Fault: fault.RollingUpgrade.Name(), Key: s.LockKeys()[0]}}, nil
	}
	if s.Events != nil {
		return slices.Clone(s.Events), nil
	}
	return fault.Schedule(s.Seed, faults, s.LockKeys(), s.Duration, s.TTL), nil
}

// Builds lists every build the scenario's nodes run, Server first.
func (s Scenario) Builds() []string {
	out := []string{s.Server}
	if s.UpgradeTo != "" {
		out = append(out, s.UpgradeTo)
	}
	for _, node := range slices.Sorted(maps.Keys(s.NodeBuilds)) {
		if b := s.NodeBuilds[node]; !slices.Contains(out, b) {
			out = append(out, b)
		}
	}
	return out
}

// Name is the scenario in a few words: build, topology, client, faults.
func (s Scenario) Name() string {
	s = s.WithDefaults()
	faults := "no faults"
	if len(s.Faults) > 0 {
		faults = strings.Join(s.Faults, "+")
	}
	if s.UpgradeTo != "" {
		faults = "upgrade to " + s.UpgradeTo
	}
	return fmt.Sprintf("%s %s %s %s", s.Server, s.Topology, s.Client, faults)
}

// Summary describes the workload in one line, defaults filled in: what a
// reader needs to see what the run did.
func (s Scenario) Summary() string {
	s = s.WithDefaults()
	share := func(rate float64, what, none string) string {
		if rate > 0 {
			return fmt.Sprintf("%s %g", what, rate)
		}
		return none
	}
	parts := []string{fmt.Sprintf("%d clients on %d key(s), TTL %s, %s per run, work %s-%s, %s, %s, %s, %s, backoff %s-%s",
		s.Clients, s.Keys, s.TTL, s.Duration, s.WorkMin, s.WorkMax,
		share(s.StallRate, fmt.Sprintf("stall rate (%s-%s)", s.TTL*6/5, s.TTL*2), "no stalls"),
		share(s.PauseRate, fmt.Sprintf("pause rate (%s-%s inside a lock call)", s.TTL*6/5, s.TTL*2), "no pauses inside a lock call"),
		share(s.LateRate, "late hold rate", "no late holds"),
		share(s.AbandonRate, "abandon rate", "no abandons"), s.BackoffMin, s.BackoffMax)}
	if s.ObserveEvery <= 0 {
		parts = append(parts, "no observations")
	}
	if s.FenceGap > 0 {
		gap := "fence gap " + s.FenceGap.String()
		if s.FenceGapRandom {
			gap += " on half the acquires"
		}
		parts = append(parts, gap)
	}
	if s.Wait.Enabled() {
		parts = append(parts, fmt.Sprintf("%s after every acquire, %s when short", s.Wait, s.Wait.OnShort))
	}
	for _, f := range s.Faults {
		parts = append(parts, "fault "+f)
	}
	if s.UpgradeTo != "" {
		parts = append(parts, "rolling upgrade to "+s.UpgradeTo)
	}
	return strings.Join(parts, ", ")
}
