// Package topology starts real Valkey and Redis servers in containers, as
// standalone, replicated, Sentinel and cluster topologies, and gives the
// controls that break one node: kill, restart, pause, partition and clock
// offset. It is mechanism only: it never decides when to break something.
package topology

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"sync"
	"time"

	tc "github.com/testcontainers/testcontainers-go"
	"github.com/valkey-io/valkey-go"
)

// Topology is a set of nodes on one Docker network, healthy when Start
// returns.
type Topology struct {
	Kind  Kind
	Build Build
	// Image is the image every node runs.
	Image string
	// Version is the version the servers report.
	Version string
	// RunID labels every container and the network of this topology.
	RunID string
	// Nodes are the servers, then the sentinels.
	Nodes []*Node
	// Startup is the time from the first container's start (every image
	// present) to healthy.
	Startup time.Duration

	opts    Options
	eng     *Engine
	net     *tc.DockerNetwork
	subnet  netip.Prefix
	gateway netip.Addr
	// addrs map announced addresses to the host's mapped ports, for the
	// harness's control connections; clients map them to the nodes'
	// client proxies (links).
	addrs   *addrMap
	clients *addrMap
	links   *links
	shim    []byte
	// removed are the nodes RemoveShard took out, kept for their logs.
	removed []*Node

	termOnce sync.Once
	termErr  error
}

// Start brings up a topology of kind on build b and waits until it is
// healthy. opts set everything else, so that one start serves every caller
// and a new setting is one more option, not a new parameter. Unless
// WithImage names one, it first obtains b's image (pulled, or built from
// Debian's packages), and the node and reinstall builds' images. On
// failure it removes whatever it started and returns the error.
func Start(ctx context.Context, eng *Engine, b Build, kind Kind, opts ...Option) (t *Topology, err error) {
	cfg := newStartConfig(opts)
	if err := cfg.obtain(ctx, eng, b, kind); err != nil {
		return nil, err
	}
	begin := time.Now()
	t = &Topology{Kind: kind, Build: b, Image: cfg.image, RunID: newRunID(), opts: cfg.opts.withDefaults(), eng: eng, addrs: newAddrMap(), clients: newAddrMap()}
	if kind == Redlock {
		// every node has its client link: a Redlock node cut off from the
		// clients alone is the algorithm's first question
		t.opts.ProxyClients = true
	}
	t.links = newLinks(t.opts.ProxyClients)
	eng.track(t.RunID)
	defer func() {
		if err != nil {
			// Clean up with a fresh deadline: ctx may be what failed.
			cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
			defer cancel()
			if terr := t.Terminate(cctx); terr != nil {
				err = errors.Join(err, terr)
			}
		}
	}()
	if !t.opts.NoClockShim {
		if t.shim, err = ClockShim(); err != nil {
			return t, err
		}
	}
	if err := t.createNetwork(ctx); err != nil {
		return t, err
	}
	switch kind {
	case Standalone:
		err = t.startStandalone(ctx)
	case Replicated:
		err = t.startReplicated(ctx)
	case Sentinel:
		err = t.startSentinel(ctx)
	case Cluster:
		err = t.startCluster(ctx)
	case Redlock:
		err = t.startRedlock(ctx)
	default:
		err = fmt.Errorf("unknown topology %q", kind)
	}
	if err != nil {
		return t, fmt.Errorf("start %s %s: %w", b.Name, kind, err)
	}
	if t.Version, err = t.Nodes[0].Version(ctx); err != nil {
		return t, fmt.Errorf("read version: %w", err)
	}
	if b.Version != "" && !b.VersionMatches(t.Version) {
		return t, fmt.Errorf("%s reports version %s, want %s", b.Name, t.Version, b.Version)
	}
	t.Startup = time.Since(begin)
	return t, nil
}

// Servers are the data nodes.
func (t *Topology) Servers() []*Node {
	var out []*Node
	for _, n := range t.Nodes {
		if !n.Sentinel {
			out = append(out, n)
		}
	}
	return out
}

// Sentinels are the sentinel nodes (none outside the sentinel topology).
func (t *Topology) Sentinels() []*Node {
	var out []*Node
	for _, n := range t.Nodes {
		if n.Sentinel {
			out = append(out, n)
		}
	}
	return out
}

// Node finds a node by name.
func (t *Topology) Node(name string) *Node {
	for _, n := range t.Nodes {
		if n.Name == name {
			return n
		}
	}
	return nil
}

// NodeOptions are the valkey-go options of clients of each server alone,
// through the same dialer as ClientOption: what a Redlock client locks a
// majority of.
func (t *Topology) NodeOptions() []valkey.ClientOption {
	var out []valkey.ClientOption
	for _, n := range t.Servers() {
		out = append(out, valkey.ClientOption{DialCtxFn: t.links.dial, DisableCache: true, InitAddress: []string{n.Internal()}, ForceSingleClient: true})
	}
	return out
}

// ClientOption is the valkey-go option for a client that follows this
// topology: one server (a Redlock topology's first), Sentinel's master
// set, or the cluster. Its dialer
// maps the addresses nodes announce to where the host reaches the nodes,
// and with ProxyClients wraps each connection in its node's fault link
// (see links).
func (t *Topology) ClientOption() valkey.ClientOption {
	opt := valkey.ClientOption{DialCtxFn: t.links.dial, DisableCache: true}
	switch t.Kind {
	case Sentinel:
		for _, n := range t.Sentinels() {
			opt.InitAddress = append(opt.InitAddress, n.Internal())
		}
		opt.Sentinel = valkey.SentinelOption{MasterSet: MasterSet}
	case Cluster:
		for _, n := range t.Servers() {
			opt.InitAddress = append(opt.InitAddress, n.Internal())
		}
	default:
		opt.InitAddress = []string{t.Servers()[0].Internal()}
		opt.ForceSingleClient = true
	}
	return opt
}

// Addrs are the host addresses a client starts from, as the adapter
// protocol hands them out: sentinels, cluster nodes, or the servers with
// the primary first.
func (t *Topology) Addrs() []string {
	var out []string
	for _, n := range t.Nodes {
		if t.Kind == Sentinel && !n.Sentinel {
			continue
		}
		out = append(out, n.ClientAddr())
	}
	return out
}

// Terminate removes every container and the network, also after a failed
// start. It is safe to call more than once.
func (t *Topology) Terminate(ctx context.Context) error {
	t.termOnce.Do(func() {
		for _, n := range t.Nodes {
			n.closeClient()
		}
		t.links.close()
		t.termErr = t.eng.RemoveRun(ctx, t.RunID)
	})
	return t.termErr
}
