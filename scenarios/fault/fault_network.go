package fault

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/lockcheck/lockcheck/scenarios/internal/pace"
	"github.com/lockcheck/lockcheck/topology"
)

// The network faults act on the clients' links to the key's primary
// through the per-node proxies a topology gets with
// topology.Options.ProxyClients (NeedsClientProxy says when); the
// primary's own links to its replicas and sentinels stay as they are.

// Latency delays what clients send to and receive from the key's primary
// by half the call timeout, give or take 40 %, each way, for 5 s: a round
// trip then takes 0.2 to 1.8 call timeouts, so some commands time out
// after they took effect, and the client must not take a timed-out
// acquire for a failed one (or a held one).
var Latency Fault = latency{faultBase{"latency", anyKind, "for 5 s delays every chunk between the clients and the key's primary by half the call timeout, ±40 %, each way: some commands time out after they took effect"}}

// BlackholePrimary swallows every byte between the clients and the key's
// primary for 4 s, keeping their connections open: the primary answers
// no client but still talks to its replicas and sentinels, so no failover
// comes; the clients' calls time out with unknown outcomes.
var BlackholePrimary Fault = blackholePrimary{faultBase{"blackhole-primary", anyKind, "for 4 s swallows every byte between the clients and the key's primary, connections kept; the primary still talks to its replicas and sentinels, so no failover comes"}}

// ResetConnections resets (TCP RST) every client connection to the key's
// primary every 100 ms for 2 s: commands in flight are cut with
// unknown outcomes, and clients reconnect.
var ResetConnections Fault = resetConnections{faultBase{"reset-connections", anyKind, "for 2 s, every 100 ms, resets (TCP RST) every client connection to the key's primary, cutting commands in flight"}}

var networkFaults = []string{Latency.Name(), BlackholePrimary.Name(), ResetConnections.Name()}

// NeedsClientProxy says whether any of the faults named acts on the
// clients' links, so the topology must route clients through proxies.
func NeedsClientProxy(faults []string) bool {
	for _, f := range faults {
		if slices.Contains(networkFaults, f) {
			return true
		}
	}
	return false
}

type latency struct{ faultBase }

func (f latency) Inject(ctx context.Context, env Env) error {
	timeout := env.CallTimeout
	if timeout <= 0 {
		timeout = time.Second
	}
	delay, jitter, span := timeout/2, timeout/5, 5*time.Second
	return onClientLinks(ctx, env, f.name, fmt.Sprintf("%s ± %s each way for %s", delay, jitter, span), span,
		func(p *topology.Node) error { return p.SlowLinks(delay, jitter) })
}

type blackholePrimary struct{ faultBase }

func (f blackholePrimary) Inject(ctx context.Context, env Env) error {
	span := 4 * time.Second
	return onClientLinks(ctx, env, f.name, "clients' bytes swallowed for "+span.String(), span,
		func(p *topology.Node) error { return p.BlackholeLinks() })
}

// onClientLinks does to the clients' links of the key's primary what
// apply does, for span, then heals them (also when ctx ends).
func onClientLinks(ctx context.Context, env Env, name, detail string, span time.Duration, apply func(*topology.Node) error) error {
	p, err := env.Topo.Primary(ctx, env.Key)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	end := env.window(name, p, detail)
	defer end()
	if err := apply(p); err != nil {
		return err
	}
	pace.Hold(ctx, span)
	return p.HealLinks()
}

type resetConnections struct{ faultBase }

func (f resetConnections) Inject(ctx context.Context, env Env) error {
	p, err := env.Topo.Primary(ctx, env.Key)
	if err != nil {
		return fmt.Errorf("reset-connections: %w", err)
	}
	span := 2 * time.Second
	i, end := env.openWindow(f.name, p, "")
	defer end()
	resets, rounds := 0, 0
	stop := time.Now().Add(span)
	for time.Now().Before(stop) && ctx.Err() == nil {
		n, err := p.ResetLinks()
		if err != nil {
			return err
		}
		resets, rounds = resets+n, rounds+1
		pace.Hold(ctx, 100*time.Millisecond)
	}
	env.Rec.FaultTarget(i, p.Name, fmt.Sprintf("%d connections reset in %d rounds over %s", resets, rounds, span))
	return nil
}
