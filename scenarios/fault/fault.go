package fault

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/lockcheck/lockcheck/history"
	"github.com/lockcheck/lockcheck/scenarios/internal/pace"
	"github.com/lockcheck/lockcheck/topology"
)

// Fault is one kind of trouble a run injects. Inject runs it once, records
// its window in the history, and leaves the topology able to serve again
// (healed, resumed, clocks reset, killed nodes restarted) when it returns,
// also when ctx ends early.
type Fault interface {
	Name() string
	// Available reports whether the fault fits a topology kind.
	Available(k topology.Kind) bool
	Inject(ctx context.Context, env Env) error
}

// Env is what a fault acts on.
type Env struct {
	Topo *topology.Topology
	Rec  *history.Recorder
	// TTL is the run's lease, which sizes clock jumps and pauses.
	TTL time.Duration
	// CallTimeout is the clients' bound on one lock call (default 1 s),
	// which sizes added latency.
	CallTimeout time.Duration
	// Key is the lock key whose primary the fault aims at.
	Key string
	// AOF says the killed node comes back with its data.
	AOF bool
	// Freezer reaches the workload's holders, for pause-client.
	Freezer *Freezer
	// Gate, when set, holds back the workload's acquires, for
	// kill-primary.
	Gate *Gate
	// From, when set, is the instant (on Rec's clock) from which an
	// acquire counts as the one a fault waits for; by default, from when
	// the fault starts waiting. A script sets it before its acquire so the
	// fault cannot miss it.
	From int64
	Log  *slog.Logger
	// UpgradeTo is the build rolling-upgrade moves the nodes onto.
	UpgradeTo string
	// Reshard has rolling-upgrade empty each cluster shard's primary
	// before the shard's steps and give its slots back after.
	Reshard bool
	// Probe, when set, says which of the client's lock commands node n
	// lacks; known is false when the client's needs are not known (an
	// external adapter).
	Probe func(ctx context.Context, n *topology.Node) (missing []string, known bool, err error)
}

// window records a fault's window in the history and returns the function
// that closes it.
func (e Env) window(name string, target *topology.Node, detail string) func() {
	_, end := e.openWindow(name, target, detail)
	return end
}

// openWindow is window that also returns the window's index, for a fault
// that picks its target after it started.
func (e Env) openWindow(name string, target *topology.Node, detail string) (int, func()) {
	t := ""
	if target != nil {
		t = target.Name
	}
	i := e.Rec.FaultStart(name, t, detail)
	e.Log.Info("fault", "name", name, "target", t, "detail", detail)
	return i, func() { e.Rec.FaultEnd(i) }
}

// faultTable is every fault a Scenario can name, in a fixed order.
var faultTable = []Fault{KillPrimary, Failover, ClockJump, RestartPrimary, ClockStrobe, PausePrimary, PartitionPrimary, ScriptFlush, MixedVersion, PauseClient,
	Latency, BlackholePrimary, ResetConnections, SlowReplication, PartitionSentinels, RollingUpgrade,
	KillNode, CrashRestart, CrashRestartLate, ClockJumpNode,
	MigrateSlot, MigrateSlotLegacy, CancelMigration, MigrateAndFailover, ScaleOut, ScaleIn, UnloadLua}

// Faults lists every fault by name, in a fixed order.
func Faults() []Fault { return slices.Clone(faultTable) }

// Register adds a fault that scenarios can name, until the returned
// function removes it: a test's own fault. A fault of the same name is
// refused. Register before runs start, not during one.
func Register(f Fault) (unregister func(), err error) {
	if _, err := Lookup(f.Name()); err == nil {
		return nil, fmt.Errorf("fault %q is taken", f.Name())
	}
	faultTable = append(faultTable, f)
	return func() {
		faultTable = slices.DeleteFunc(faultTable, func(g Fault) bool { return g.Name() == f.Name() })
	}, nil
}

// Names lists the fault names.
func Names() []string {
	var out []string
	for _, f := range Faults() {
		out = append(out, f.Name())
	}
	return out
}

// Lookup finds a fault by name.
func Lookup(name string) (Fault, error) {
	for _, f := range Faults() {
		if f.Name() == name {
			return f, nil
		}
	}
	return nil, fmt.Errorf("unknown fault %q: choose one of %s", name, strings.Join(Names(), ", "))
}

var replicated = []topology.Kind{topology.Replicated, topology.Sentinel, topology.Cluster}
var failsOver = []topology.Kind{topology.Sentinel, topology.Cluster}
var anyKind = []topology.Kind{topology.Standalone, topology.Replicated, topology.Sentinel, topology.Cluster, topology.Redlock}
var redlockOnly = []topology.Kind{topology.Redlock}

// faultBase gives a fault its name, the kinds it fits and its one-line
// description.
type faultBase struct {
	name  string
	kinds []topology.Kind
	doc   string
}

func (f faultBase) Name() string                   { return f.name }
func (f faultBase) Available(k topology.Kind) bool { return slices.Contains(f.kinds, k) }

// Description says in one line what the fault does and how it ends: the
// reference pages (lockcheck docs) are written from it, so that what they
// say about a fault lives beside its code.
func (f faultBase) Description() string { return f.doc }

// Describer is a fault that says what it does in one line. Every built-in
// fault is one; a fault a test registers need not be.
type Describer interface {
	Description() string
}

// Configured is a fault that needs lines in every server's configuration
// from the start: a setting the server reads only then (the MODULE
// command, for unload-lua).
type Configured interface {
	ServerConfig() []string
}

// cleanup is a context for putting things back after ctx ended.
func cleanup(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
}

// replicasOf are the servers that follow primary now.
func replicasOf(ctx context.Context, t *topology.Topology, primary *topology.Node) []*topology.Node {
	info, err := primary.Info(ctx, "replication")
	if err != nil {
		return nil
	}
	var ips []string
	for k, v := range info {
		if strings.HasPrefix(k, "slave") && strings.Contains(v, "ip=") {
			for _, kv := range strings.Split(v, ",") {
				if ip, ok := strings.CutPrefix(kv, "ip="); ok {
					ips = append(ips, ip)
				}
			}
		}
	}
	sort.Strings(ips)
	var out []*topology.Node
	for _, n := range t.Servers() {
		if slices.Contains(ips, n.IP.String()) {
			out = append(out, n)
		}
	}
	return out
}

// awaitAcquire waits until an acquire that returned OK was recorded, called
// after env.From (or this call) and accept(key) holds for it, or limit passes.
func awaitAcquire(ctx context.Context, env Env, accept func(key string) bool, limit time.Duration) (string, bool) {
	rec := env.Rec
	start, from := env.From, 0
	if start == 0 {
		// Only acquires recorded from now on can qualify: skip the rest.
		start = rec.Now()
		_, from = rec.Since(1 << 62)
	}
	op, ok := awaitRecorded(ctx, rec, from, limit, func(op history.Op) bool {
		return op.Kind == history.Acquire && op.Outcome == history.OK && op.Call >= start && accept(op.Key)
	})
	return op.Key, ok
}

// awaitRecorded waits until an operation that match takes is recorded
// (watching the recorder from its index from), or limit passes: the
// faults that time themselves by the history watch it this way.
func awaitRecorded(ctx context.Context, rec *history.Recorder, from int, limit time.Duration, match func(history.Op) bool) (history.Op, bool) {
	var found history.Op
	err := pace.Poll(ctx, limit, 2*time.Millisecond, func() bool {
		var ops []history.Op
		ops, from = rec.Since(from)
		for _, op := range ops {
			if match(op) {
				found = op
				return true
			}
		}
		return false
	})
	return found, err == nil
}

// newPrimary waits until the topology names a primary for key other than
// old, or limit passes.
func newPrimary(ctx context.Context, t *topology.Topology, key string, old *topology.Node, limit time.Duration) (*topology.Node, error) {
	var p *topology.Node
	err := pace.Poll(ctx, limit, 100*time.Millisecond, func() bool {
		qctx, cancel := context.WithTimeout(ctx, time.Second)
		defer cancel()
		q, err := t.Primary(qctx, key)
		if err == nil && q != old {
			p = q
		}
		return p != nil
	})
	if err == pace.ErrLimit {
		return nil, fmt.Errorf("no replica of %s promoted within %s", old.Name, limit)
	}
	return p, err
}
