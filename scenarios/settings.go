package scenarios

import (
	"strings"
	"time"

	"github.com/lockcheck/lockcheck/scenarios/fault"
	"github.com/lockcheck/lockcheck/scenarios/lockclient"
	"github.com/lockcheck/lockcheck/topology"
)

// Settings is the table of settings: one row per setting of a Scenario,
// in the order the replay command line (Args) writes them. lockcheck run
// registers its flags by walking it, WithDefaults applies its defaults in
// its order (a derived default reads the rows above it), Validate runs its
// checks, Args writes it, and scenario.json is read and written from it.
//
// Adding a setting is one row (and its field in one of the parts,
// parts.go). A plain value needs no more than its flag, field, JSON key,
// help and default:
//
//	{Flag: "grace", Field: "Grace", JSON: "grace,omitempty", Default: 50 * time.Millisecond,
//		Positive: true, Check: checkNotNegative, Help: "how long a released lock's key may linger"},
//
// The field's type says how the flag parses it and Args writes it: text,
// a count, a switch, a duration (text in scenario.json too), or a share
// (float64, whose 0 on the command line says None). A setting that is not
// one value as text (repeatable flags, several flags to one field) gives
// Parse and Format. TestSettingsCoverScenario refuses a field without a
// row.
//
// The table is built on each call, so that its help lists the client
// kinds registered by then.
func Settings() []Setting {
	return []Setting{
		// the servers
		{Flag: "server", Field: "Server", JSON: "server", Help: "server build, e.g. valkey-9.1 (lockcheck images lists them)"},
		{Flag: "node-build", Field: "NodeBuilds", JSON: "node_builds,omitempty", Repeat: true, Parse: parseNodeBuilds, Format: formatNodeBuilds,
			Help: "NODE=BUILD: run one node on another build, e.g. n1=valkey-8.1 (repeatable; a rolling upgrade half way)"},
		{Field: "UpgradeTo", JSON: "upgrade_to,omitempty"}, // lockcheck upgrade's --to
		{Flag: "reshard", Field: "Reshard", JSON: "reshard,omitempty",
			Help: "cluster upgrade: move each shard's slots to another primary before its nodes are replaced and back after, instead of a failover (lockcheck upgrade only)"},
		{Field: "NodeConfig", JSON: "node_config,omitempty"},
		{Flag: "topology", Field: "Topology", JSON: "topology", Default: topology.Standalone,
			Help: "standalone, replicated, sentinel, cluster, or redlock (independent primaries)"},
		{Flag: "nodes", Field: "Nodes", JSON: "nodes,omitempty", Optional: true, Positive: true,
			Help: "independent primaries of a redlock topology, a `number` (default 3)"},
		{Flag: "min-replicas-to-write", Field: "MinReplicas", JSON: "min_replicas_to_write,omitempty",
			Help: "every server's min-replicas-to-write: a primary refuses writes while fewer replicas acknowledged within --min-replicas-max-lag (0: off)"},
		{Flag: "min-replicas-max-lag", Field: "MinReplicasMaxLag", JSON: "min_replicas_max_lag,omitempty",
			Help: "every server's min-replicas-max-lag, whole seconds (default the server's, 10s)"},
		{Flag: "aof", Field: "AOF", JSON: "aof,omitempty",
			Help: "turn on appendonly (appendfsync as --fsync says, always by default): a killed node keeps its data"},
		{Flag: "fsync", Field: "Fsync", JSON: "fsync,omitempty",
			Help: "appendfsync policy with --aof: always (default), everysec or no; what a node's power loss (crash-restart) keeps"},
		// the client
		{Flag: "client", Field: "Client", JSON: "client", Default: "native",
			Help: "lock client: " + strings.Join(lockclient.Kinds(), ", ") + ", or external:CMD"},
		{Flag: "fenced", Field: "Fenced", JSON: "fenced,omitempty", Help: "the external adapter draws fences: the resource checks them"},
		// the faults
		{Flag: "fault", Field: "Faults", JSON: "faults,omitempty", Repeat: true, Parse: parseFaults, Format: formatFaults,
			Help: "fault to inject (repeatable): " + strings.Join(fault.Names(), ", ")},
		{Flag: "fault-at", Field: "Events", JSON: "events,omitempty", Repeat: true, Parse: parseEvents, Format: formatEvents,
			Help: "FAULT@OFFSET[@KEY]: inject FAULT at OFFSET from the start, on KEY's primary (default the first key); repeatable; replaces the seed's fault schedule (lockcheck shrink writes these)"},
		// the traffic
		{Flag: "duration", Field: "Duration", JSON: "duration,omitempty", Default: 60 * time.Second, Positive: true, Check: checkNotNegative,
			Help: "how long the workload runs; with faults it goes on until a lease after the last fault step ended, at most as long again, and says when that bound cut it short"},
		{Flag: "until-covered", Field: "UntilCovered", JSON: "until_covered,omitempty",
			Help: "end the run once it covered its goal (" + CoverageGoalText() + "), --duration then only its bound; what it covered is in result.json"},
		{Flag: "seed", Field: "Seed", JSON: "seed", Help: "seed for the workload's choices and the fault schedule (default 0: pick one and print it)"},
		{Flag: "clients", Field: "Clients", JSON: "clients", Default: 6, Positive: true, Check: checkClients, Help: "logical clients"},
		{Flag: "keys", Field: "Keys", JSON: "keys", Default: 1, Positive: true, Check: checkKeys, Help: "lock keys (few keys, many clients: every lock is contended)"},
		{Flag: "ttl", Field: "TTL", JSON: "ttl,omitempty", Default: 15 * time.Second, Positive: true, Check: checkNotNegative,
			Help: "lease asked for by every acquire and extend; longer than a failover, so a lock lost with a primary is still believed held when the new primary hands it out"},
		{Flag: "work-min", Field: "WorkMin", JSON: "work_min,omitempty", Positive: true, Check: checkNotNegative,
			Derive: func(s *Scenario) { setDuration(&s.WorkMin, s.TTL/5) },
			Help:   "shortest work while holding (default TTL/5: longer than a failover; holds are drawn evenly on a log scale)"},
		{Flag: "work-max", Field: "WorkMax", JSON: "work_max,omitempty", Positive: true, Check: checkNotNegative,
			Derive: func(s *Scenario) { setDuration(&s.WorkMax, s.TTL) },
			Help:   "longest work while holding (default TTL: three extend periods)"},
		{Flag: "stall-rate", Field: "StallRate", JSON: "stall_rate,omitempty", Default: DefaultStallRate, Check: checkShare,
			Help: "share of holds (0..1) that stall past the TTL without extending, like a GC pause; an unfenced client's write after one is stale (see also --fault pause-client)"},
		{Flag: "pause-rate", Field: "PauseRate", JSON: "pause_rate,omitempty", Default: DefaultPauseRate, Check: checkShare,
			Help: "share of holds (0..1) frozen past the TTL inside one lock call (between its commands, or an adapter SIGSTOPped mid-request); an unfenced client's write after one is stale"},
		{Flag: "late-rate", Field: "LateRate", JSON: "late_rate,omitempty", Default: 0.1, Check: checkShare,
			Help: "share of holds (0..1) that extend and release near the lease's end (0: none)"},
		{Flag: "late-reply-rate", Field: "LateReplyRate", JSON: "late_reply_rate,omitempty", Default: 0.1, Check: checkShare,
			Help: "share of holds (0..1) in which the reply to one lock call (acquire, an extend or the release) is held back past the call timeout: the command takes effect, the client times out (0: none)"},
		{Flag: "quiet-stall-rate", Field: "QuietStallRate", JSON: "quiet_stall_rate,omitempty", Default: 0.5, Check: checkShare,
			Help: "share of the stalls that end just past the lease (0..1) during which the other workers' acquires of the key wait until the stalled holder's next call returned, so that call finds the key free (0: none)"},
		{Flag: "abandon-rate", Field: "AbandonRate", JSON: "abandon_rate,omitempty", Default: 0.02, Check: checkShare,
			Help: "share of holds (0..1) left without release, as by a crashed holder (0: none)"},
		{Flag: "observe-every", Field: "ObserveEvery", JSON: "observe_every,omitempty", Check: checkInterval,
			FromFlag: func(s *Scenario) { s.ObserveEvery = max(s.ObserveEvery, None) }, Format: formatObserveEvery,
			Derive: func(s *Scenario) { setDuration(&s.ObserveEvery, s.TTL/4) },
			Help:   "mean time between the observer's reads of a lock key (default TTL/4; negative: no observer)"},
		{Flag: "backoff-min", Field: "BackoffMin", JSON: "backoff_min,omitempty", Default: 5 * time.Millisecond, Positive: true, Check: checkNotNegative,
			Help: "shortest pause between acquire attempts"},
		{Flag: "backoff-max", Field: "BackoffMax", JSON: "backoff_max,omitempty", Positive: true, Check: checkNotNegative,
			Derive: func(s *Scenario) { setDuration(&s.BackoffMax, max(s.TTL/4, s.BackoffMin)) },
			Help:   "longest pause between acquire attempts (default TTL/4)"},
		{Flag: "write-gap", Field: "WriteGap", JSON: "write_gap,omitempty", Positive: true, Check: checkNotNegative,
			Derive: func(s *Scenario) { setDuration(&s.WriteGap, s.TTL/10) },
			Help:   "the unfenced resource's pause between read and write (default TTL/10)"},
		// the client's options
		{Flag: "call-timeout", Field: "CallTimeout", JSON: "call_timeout,omitempty", Default: time.Second, Positive: true, Check: checkNotNegative,
			Help: "bound on one lock call; past it the outcome is unknown"},
		{Flag: "wait", Field: "Wait", JSON: "wait,omitzero", Parse: parseWaitFlags, Format: formatWait, Derive: deriveOnShort,
			Help: "REPLICAS[/TIMEOUT]: WAIT after every acquire, e.g. 1/100ms (a mitigation of the failover race: it narrows its window, never closes it)"},
		{Flag: "wait-aof", Help: "LOCAL/REPLICAS[/TIMEOUT]: WAITAOF after every acquire instead, e.g. 1/1/100ms (needs --aof)"},
		{Flag: "on-short", Default: string(lockclient.WaitGoOn),
			Help: "what a client does when WAIT or WAITAOF falls short: go-on (keep the lock) or release (give it back and retry)"},
		{Flag: "fence-gap", Field: "FenceGap", JSON: "fence_gap,omitempty", Check: checkNotNegative, Help: "mutant-fence-outside's pause between SET and INCR"},
		{Flag: "fence-gap-random", Field: "FenceGapRandom", JSON: "fence_gap_random,omitempty", Help: "pause only half of mutant-fence-outside's acquires"},
		// the check
		{Flag: "tolerance", Field: "ClockTolerance", JSON: "clock_tolerance,omitempty", Default: 10 * time.Millisecond, Positive: true, Check: checkNotNegative,
			Help: "how far a server's lease may end before call + TTL on the harness clock"},
	}
}

func setDuration(d *time.Duration, def time.Duration) {
	if *d == 0 {
		*d = def
	}
}
