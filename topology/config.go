package topology

import (
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"
)

// Ports inside each container.
const (
	ServerPort   = 6379
	SentinelPort = 26379
	// MasterSet is the name Sentinel monitors the primary under.
	MasterSet = "mymaster"
)

// Paths inside each container.
const (
	confPath      = "/data/node.conf"
	shimPath      = "/usr/lib/lockcheck/clockshim.so"
	clockFile     = "/var/lib/lockcheck/clock-offset"
	wipeMarker    = "/data/.lockcheck-wipe"
	clusterConfig = "/data/nodes.conf"
)

// Options tune a topology. The zero value gives the defaults below.
type Options struct {
	// AOF turns on appendonly on every server (appendfsync as Fsync says),
	// so a killed node comes back with its data.
	AOF bool
	// Fsync is the appendfsync policy with AOF: always (the default),
	// everysec or no. A node killed by SIGKILL keeps what it wrote either
	// way (the kernel has it); the policy decides what a power loss
	// keeps, which Node.Crash emulates.
	Fsync Fsync
	// Nodes is the number of independent primaries of a Redlock
	// topology (default 3); other kinds have their own shape.
	Nodes int
	// DownAfter is Sentinel's down-after-milliseconds (default 1 s).
	DownAfter time.Duration
	// FailoverTimeout is Sentinel's failover-timeout (default 3 s).
	FailoverTimeout time.Duration
	// InfoPeriod is how often each sentinel reads a replica's INFO once
	// the topology is healthy (SENTINEL DEBUG info-period; default 1 s,
	// the server's own is 10 s), and HelloPeriod how often it publishes
	// its hello (publish-period; default 500 ms, the server's own 2 s). A
	// primary that comes back after a failover reports itself a primary
	// again; a sentinel makes it a replica at its first INFO four hello
	// periods after the one that showed that: 2-3 s here, 8-18 s with
	// the server's own periods.
	InfoPeriod, HelloPeriod time.Duration
	// NodeTimeout is cluster-node-timeout (default 1 s).
	NodeTimeout time.Duration
	// NoClockShim leaves the clock shim out; SetClockOffset then fails.
	NoClockShim bool
	// HealthTimeout bounds the wait for a healthy topology (default 90 s).
	HealthTimeout time.Duration
	// ServerConfig lines are appended to every server's configuration.
	ServerConfig []string
	// NodeImages runs some nodes (by name: n1) on another image of the
	// same family: an older replica under newer clients, as in a rolling
	// upgrade.
	NodeImages map[string]string
	// Images are the images of further builds (by build name) that nodes
	// may be reinstalled on (Node.Reinstall, a rolling upgrade).
	Images map[string]string
	// NodeConfig lines are appended to one node's configuration (by name),
	// e.g. replica-priority 0 so Sentinel never promotes it.
	NodeConfig map[string][]string
	// ProxyClients routes clients through a proxy per node (links), where
	// network faults act (SlowLinks, BlackholeLinks, ResetLinks). It costs
	// throughput, so it is on only when asked for; otherwise clients dial
	// the nodes' container addresses when the host reaches them (a local
	// engine), else the mapped ports.
	ProxyClients bool
}

func (o Options) withDefaults() Options {
	if o.Fsync == "" {
		o.Fsync = FsyncAlways
	}
	if o.Nodes == 0 {
		o.Nodes = DefaultRedlockNodes
	}
	if o.DownAfter == 0 {
		o.DownAfter = time.Second
	}
	if o.FailoverTimeout == 0 {
		o.FailoverTimeout = 3 * time.Second
	}
	if o.InfoPeriod == 0 {
		o.InfoPeriod = time.Second
	}
	if o.HelloPeriod == 0 {
		o.HelloPeriod = 500 * time.Millisecond
	}
	if o.NodeTimeout == 0 {
		o.NodeTimeout = time.Second
	}
	if o.HealthTimeout == 0 {
		o.HealthTimeout = 90 * time.Second
	}
	return o
}

// Fsync is an appendfsync policy.
type Fsync string

const (
	FsyncAlways   Fsync = "always"
	FsyncEverysec Fsync = "everysec"
	FsyncNo       Fsync = "no"
)

// ParseFsync checks an appendfsync policy's name.
func ParseFsync(s string) (Fsync, error) {
	switch f := Fsync(s); f {
	case FsyncAlways, FsyncEverysec, FsyncNo:
		return f, nil
	}
	return "", fmt.Errorf("unknown fsync policy %q: choose one of always, everysec, no", s)
}

// DefaultRedlockNodes is a Redlock topology's size when Options.Nodes is
// not set: the smallest that survives one node's loss.
const DefaultRedlockNodes = 3

// serverConfig renders a server's configuration file. primary is the
// address a replica follows ("" for a primary or a cluster node).
func serverConfig(kind Kind, primary string, o Options) string {
	lines := []string{
		fmt.Sprintf("port %d", ServerPort),
		"bind 0.0.0.0",
		"protected-mode no",
		"dir /data",
		// Snapshots only when asked (Restart keeping data saves first), so
		// a killed node comes back empty unless AOF is on.
		`save ""`,
		// Replicas resynchronise over the socket at once after a failover.
		"repl-diskless-sync yes",
		"repl-diskless-sync-delay 0",
		// A replica with nothing to lose loads the stream as it arrives:
		// saved to disk first, the load waits for the main thread to see
		// the download finished, up to 0.75 s later (observed on 9.1).
		"repl-diskless-load on-empty-db",
		"enable-debug-command yes",
	}
	if o.AOF {
		lines = append(lines, "appendonly yes", "appendfsync "+string(o.Fsync))
	}
	if primary != "" {
		lines = append(lines, "replicaof "+strings.Replace(primary, ":", " ", 1))
	}
	if kind == Cluster {
		lines = append(lines,
			"cluster-enabled yes",
			"cluster-config-file "+clusterConfig,
			fmt.Sprintf("cluster-node-timeout %d", o.NodeTimeout.Milliseconds()),
			// A replica promotes itself however stale it is: the failover
			// race lockcheck looks for needs exactly that.
			"cluster-replica-validity-factor 0",
		)
	}
	lines = append(lines, o.ServerConfig...)
	return strings.Join(lines, "\n") + "\n"
}

// sentinelConfig renders a sentinel's configuration; Sentinel rewrites the
// file, so it lives in the writable data folder. The sentinel is told its
// own id, the replicas and the other sentinels (with their ids) as it
// would have written them itself after discovering them: it knows its
// deployment at once instead of after rounds of hello messages. It starts
// with down-after startDownAfter, not Options.DownAfter: the sentinels
// start with the servers, and one that saw the primary silent for a
// second before it listened would fail it over onto a replica that was
// not yet following it; startSentinel sets the real value once the
// sentinels agree.
func sentinelConfig(primary, id string, replicas []string, peers map[string]string, o Options) string {
	host, port, _ := strings.Cut(primary, ":")
	lines := []string{
		fmt.Sprintf("port %d", SentinelPort),
		"bind 0.0.0.0",
		"protected-mode no",
		"dir /data",
		"sentinel myid " + id,
		fmt.Sprintf("sentinel monitor %s %s %s 2", MasterSet, host, port),
		fmt.Sprintf("sentinel down-after-milliseconds %s %d", MasterSet, startDownAfter.Milliseconds()),
		fmt.Sprintf("sentinel failover-timeout %s %d", MasterSet, o.FailoverTimeout.Milliseconds()),
		fmt.Sprintf("sentinel parallel-syncs %s 2", MasterSet),
	}
	for _, r := range replicas {
		lines = append(lines, fmt.Sprintf("sentinel known-replica %s %s", MasterSet, strings.Replace(r, ":", " ", 1)))
	}
	for _, addr := range slices.Sorted(maps.Keys(peers)) {
		lines = append(lines, fmt.Sprintf("sentinel known-sentinel %s %s %s", MasterSet, strings.Replace(addr, ":", " ", 1), peers[addr]))
	}
	return strings.Join(lines, "\n") + "\n"
}

// startDownAfter is the sentinels' down-after while the topology starts.
const startDownAfter = time.Minute

// sentinelID is the id of a topology's i-th sentinel: 40 hex characters,
// as Sentinel's own.
func sentinelID(runID string, i int) string {
	sum := sha1.Sum([]byte(fmt.Sprintf("%s/s%d", runID, i)))
	return hex.EncodeToString(sum[:])
}

// launchScript is the container's command: on the container's first
// start it unpacks the node's files from its environment (see withFiles),
// then drops the data files when Restart left the wipe marker, then execs
// the server, with the clock shim preloaded when preload names it, so that
// it is PID 1 and receives the signals Kill and Pause send. The shim is
// preloaded for the server alone: the shell and the unpacking run before
// it exists.
func launchScript(b Build, sentinel bool, preload string) string {
	args := b.Binary() + " " + confPath
	if sentinel {
		args += " --sentinel"
	}
	unpack := fmt.Sprintf(`if [ -n "$%[1]s" ] && [ ! -e %[2]s ]; then printf '%%s' "$%[1]s" | base64 -d | tar -x -C / || { echo "lockcheck: cannot unpack the node's files (the image needs base64 and tar)" >&2; exit 1; }; fi; unset %[1]s; `, filesEnv, filesMarker)
	wipe := fmt.Sprintf("if [ -e %[1]s ]; then rm -rf /data/dump.rdb /data/appendonlydir /data/appendonly.aof* %[1]s; fi; ", wipeMarker)
	if preload != "" {
		args = "env LD_PRELOAD=" + preload + " " + args
	}
	return unpack + wipe + "exec " + args
}
