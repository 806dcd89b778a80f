package fault

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/lockcheck/lockcheck/scenarios/internal/pace"
	"github.com/lockcheck/lockcheck/topology"
)

// The faults of a Redlock topology test the algorithm's claims one node at
// a time. Each first holds the workload's acquires back (its Gate, which
// hurries the holder) until the key is free on every node, cuts the nodes
// past a bare majority off from the clients (their links swallow every
// byte), and lets the acquires go: the next lock lands without the cut
// nodes, so its holder has exactly a majority. With a spare node no one
// node's trouble could matter; the claims are about this case. Then the
// links heal (and their connections are reset, as out of step), and the
// fault strikes one node of the holder's majority while its lease runs.

// KillNode SIGKILLs one node of the holder's majority and starts it again
// at once: it keeps what it wrote when AOF is on (the kernel has the
// file, whatever the fsync policy), nothing without AOF.
var KillNode Fault = redlockFault{faultBase{"kill-node", redlockOnly, "with the next lock on a bare majority, SIGKILLs one node of it and starts it at once: it keeps its AOF under --aof, nothing without"}, "SIGKILL, back at once",
	func(ctx context.Context, env Env, n *topology.Node) error { return n.Crash(ctx, 0, false) }}

// CrashRestart is a power loss of one node of the holder's majority, back
// at once: it keeps only what was synced (topology.Node.Crash).
var CrashRestart Fault = redlockFault{faultBase{"crash-restart", redlockOnly, "with the next lock on a bare majority, a power loss of one node of it, back at once: it keeps only what was synced (--aof --fsync always)"}, "power loss, back at once",
	func(ctx context.Context, env Env, n *topology.Node) error { return n.Crash(ctx, 0, true) }}

// CrashRestartLate is CrashRestart with the node kept down until every
// lease it can have held has ended (TTL + 500 ms): the delayed restart
// Redlock asks for when writes are not synced.
var CrashRestartLate Fault = redlockFault{faultBase{"crash-restart-late", redlockOnly, "as crash-restart, but the node stays down for TTL + 500 ms: every lease it held has ended when it is back"}, "power loss, back after the TTL",
	func(ctx context.Context, env Env, n *topology.Node) error {
		return n.Crash(ctx, env.TTL+500*time.Millisecond, true)
	}}

// ClockJumpNode moves one node of the holder's majority's clock forward by
// twice the TTL for max(2 TTL, 2 s): the holder's key there expires at
// once, a minority's clock trouble.
var ClockJumpNode Fault = redlockFault{faultBase{"clock-jump-node", redlockOnly, "with the next lock on a bare majority, moves one node's clock forward by 2 TTL for max(2 TTL, 2 s): its copy of the lock expires at once"}, "clock +2 TTL",
	func(ctx context.Context, env Env, n *topology.Node) error {
		defer resetClock(ctx, n)
		if err := n.SetClockOffset(ctx, 2*env.TTL); err != nil && ctx.Err() == nil {
			return err
		}
		pace.Hold(ctx, max(2*env.TTL, 2*time.Second))
		return nil
	}}

// redlockFault is the shared set-up, then strike on one node.
type redlockFault struct {
	faultBase
	detail string
	strike func(ctx context.Context, env Env, n *topology.Node) error
}

func (f redlockFault) Inject(ctx context.Context, env Env) (err error) {
	servers := env.Topo.Servers()
	target, err := env.Topo.Primary(ctx, env.Key)
	if err != nil {
		return fmt.Errorf("%s: %w", f.name, err)
	}
	var cut []*topology.Node
	for _, n := range servers {
		if n != target && len(cut) < len(servers)-(len(servers)/2+1) {
			cut = append(cut, n)
		}
	}
	win, end := env.openWindow(f.name, target, f.detail)
	defer end()
	env.Gate.shut()
	defer env.Gate.reopen()
	free := freeOnEvery(ctx, servers, env.Key, max(2*env.TTL, 5*time.Second))
	healed := false
	heal := func() error {
		if healed {
			return nil
		}
		healed = true
		var errs []error
		for _, n := range cut {
			errs = append(errs, n.HealLinks())
			_, rerr := n.ResetLinks()
			errs = append(errs, rerr)
		}
		return errors.Join(errs...)
	}
	defer func() { err = errors.Join(err, heal()) }()
	for _, n := range cut {
		if err := n.BlackholeLinks(); err != nil {
			return err
		}
	}
	if env.From == 0 {
		env.From = env.Rec.Now() // the acquires the gate lets go count
	}
	env.Gate.reopen()
	key, landed := awaitAcquire(ctx, env, func(string) bool { return true }, max(2*env.TTL, 5*time.Second))
	if err := heal(); err != nil {
		return err
	}
	env.Rec.FaultTarget(win, target.Name, fmt.Sprintf("%s; %d node(s) cut off from the clients, with %s free everywhere (%v), until an acquire of %s landed without them (landed: %v)",
		f.detail, len(cut), env.Key, free, key, landed))
	if ctx.Err() != nil {
		return nil
	}
	return f.strike(ctx, env, target)
}

// freeOnEvery waits until key is on none of nodes, or limit passes; it
// says which. It asks on the harness's own connections, which no client
// link fault touches.
func freeOnEvery(ctx context.Context, nodes []*topology.Node, key string, limit time.Duration) bool {
	return pace.Poll(ctx, limit, 5*time.Millisecond, func() bool {
		for _, n := range nodes {
			if v, err := n.Do(ctx, "EXISTS", key); err != nil || v != "0" {
				return false
			}
		}
		return true
	}) == nil
}
