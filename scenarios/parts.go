package scenarios

import (
	"time"

	"github.com/lockcheck/lockcheck/scenarios/fault"
	"github.com/lockcheck/lockcheck/scenarios/lockclient"
	"github.com/lockcheck/lockcheck/topology"
)

// The five parts of a Scenario, each the settings one stage of a run
// reads: the topology's starter reads ServerSettings, the lock clients
// ClientSettings, the fault schedule FaultSettings, the workers
// TrafficSettings and the checker CheckSettings. Their fields have no JSON
// tags: scenario.json is written from the table of settings.

// ServerSettings are the servers a run starts.
type ServerSettings struct {
	// Server is the build every node runs (topology.Lookup, or a user's
	// own binary's name).
	Server string
	// NodeBuilds runs some nodes on another build (node name, e.g. "n1",
	// to build name): a rolling upgrade caught half way.
	NodeBuilds map[string]string
	// UpgradeTo, when set, makes the run a rolling upgrade: every node
	// moves from Server onto this build (an older one: a rollback), one at
	// a time while the workload runs (the rolling-upgrade fault, the run's
	// only fault), and the run ends with the upgrade's last step, Duration
	// at most.
	UpgradeTo string
	// Reshard, with UpgradeTo on a cluster, empties each shard's primary
	// before its shard is upgraded and gives the slots back after, as an
	// operator does, instead of failing over onto an upgraded replica:
	// the lock keys' slots move while the workload runs.
	Reshard bool
	// NodeConfig appends lines to one node's configuration (by name), e.g.
	// "replica-priority 0" so that Sentinel never promotes it.
	NodeConfig map[string][]string
	// Topology is standalone, replicated, sentinel or cluster (standalone).
	Topology topology.Kind
	// AOF runs every server with appendonly (appendfsync as Fsync says,
	// always by default), so a killed node comes back with its data.
	AOF bool
	// Fsync is the appendfsync policy with AOF (always): what a node's
	// power loss keeps (topology.Node.Crash).
	Fsync topology.Fsync
	// Nodes is the number of independent primaries of a redlock topology
	// (3).
	Nodes int
	// MinReplicas is every server's min-replicas-to-write (0: off): a
	// primary refuses writes while fewer replicas than this have
	// acknowledged within MinReplicasMaxLag (its default, 10 s). The
	// article's mitigation on the server's side, beside WAIT on the
	// client's.
	MinReplicas       int
	MinReplicasMaxLag time.Duration
}

// ClientSettings are the lock client every worker runs and its options.
type ClientSettings struct {
	// Client is the client kind (see Kinds), or "external:CMD" (native).
	Client string
	// Fenced makes the resource check fences. Kinds that draw fences turn
	// it on themselves; set it for an external adapter that draws them.
	Fenced bool
	// Wait asks for WAIT or WAITAOF after every acquire (off): the
	// article's mitigation, which narrows the failover window.
	Wait lockclient.WaitOptions
	// FenceGap is a pause between SET and INCR in mutant-fence-outside,
	// standing in for a GC pause; FenceGapRandom makes half of those
	// pauses FenceGap and half none (off).
	FenceGap       time.Duration
	FenceGapRandom bool
	// CallTimeout bounds one lock call (1 s); an external adapter gets it
	// plus a grace to answer before it is replaced.
	CallTimeout time.Duration
}

// FaultSettings are the faults a run injects.
type FaultSettings struct {
	// Faults are drawn from by the seeded schedule (names, see Faults).
	Faults []string
	// Events, when set, is the fault schedule itself, not the seed's draw:
	// each step's fault (one of Faults), offset and key. lockcheck shrink
	// writes it, to keep only the steps a violation needs.
	Events []fault.Event
}

// TrafficSettings are what the workers do with the lock, and for how
// long.
type TrafficSettings struct {
	// UntilCovered ends the run once it has covered its goal
	// (CoverageGoal), Duration then only its bound: a passing gate pays
	// for what it must and no more.
	UntilCovered bool
	// Duration bounds the workload (60 s).
	Duration time.Duration
	// TTL is the lease every acquire and extend asks for (15 s): longer
	// than a failover, so that a lock lost with a primary is still
	// believed held when the new primary hands it out.
	TTL time.Duration
	// Seed makes every worker's choices and the fault schedule
	// reproducible. 0 is a seed like any other here; the CLI picks one.
	Seed int64
	// Clients is the number of workers (6); Keys the number of lock keys
	// they contend for (1: every lock is contended).
	Clients int
	Keys    int
	// WorkMin and WorkMax bound a hold's work time, drawn evenly on a log
	// scale (TTL/5 and TTL): from longer than a failover, so that a holder
	// whose lock was lost with the primary still believes in it when the
	// replica hands it out, to three extend periods. Longer holds would
	// keep the key taken for most of a run.
	WorkMin time.Duration
	WorkMax time.Duration
	// StallRate is the share of holds that stall for 1.2-2 TTL without
	// extending, like a GC pause: mid-work, just before an extend or just
	// before the release (0.6). An unfenced client's write after a stall
	// is stale whatever the server does, so a correct unfenced client
	// fails the resource check with stalls on (class stale-writes, which
	// the default expectation, lock-correct, allows). On by default: the
	// bugs that hurt in production show when a holder is slow at the
	// wrong moment.
	StallRate float64
	// PauseRate is the share of holds frozen inside one lock operation
	// (0.7): for 1.2-2 TTL between its commands where it has several, or
	// after the server answered where it has one; half of the acquires'
	// pauses come before the command goes out and outlast the call's
	// deadline (Plan.PauseSlow), and extends get twice the acquires' or
	// the releases' share. Like a stall, it makes an unfenced
	// client's next write stale.
	PauseRate float64
	// LateRate is the share of holds that extend and release near the
	// lease's end, 0.85-0.98 TTL after the last (0.1).
	LateRate float64
	// LateReplyRate is the share of holds in which the reply to one lock
	// call (an acquire, an extend or the release) comes past the call's
	// timeout, the command having taken effect (0.1): the client's timeout
	// path, which a frozen client never takes (it finds its reply waiting
	// when it wakes).
	LateReplyRate float64
	// QuietStallRate is the share of the stalls that end just past the
	// lease (half of the stalls) during which the other workers' acquires
	// of the key wait until the stalled holder's next call returned
	// (0.5): that call then finds the key free, which a contended lock
	// seldom shows (Plan.StallQuiet).
	QuietStallRate float64
	// AbandonRate is the share of holds left without release, as by a
	// crashed holder (0.02).
	AbandonRate float64
	// ObserveEvery is the mean time between the observer's reads of a lock
	// key (PTTL and GET in one transaction) besides the read after every
	// OK acquire and extend (TTL/4).
	ObserveEvery time.Duration
	// BackoffMin and BackoffMax bound the jittered pause between acquire
	// attempts (5 ms and TTL/4).
	BackoffMin time.Duration
	BackoffMax time.Duration
	// WriteGap is the unfenced resource's pause between read and write
	// (TTL/10): wide enough that two holders at once interleave their
	// read-modify-writes and lose increments.
	WriteGap time.Duration
}

// CheckSettings are what the checker is told about the run.
type CheckSettings struct {
	// ClockTolerance is how far a server's expiry may run ahead of the
	// harness clock before the checker calls it early (10 ms).
	ClockTolerance time.Duration
}
