//go:build cgo

package lockclient

import (
	"context"
	"fmt"
	"net"
	"strconv"

	glide "github.com/valkey-io/valkey-glide/go/v2"
	"github.com/valkey-io/valkey-glide/go/v2/config"

	"github.com/lockcheck/lockcheck/topology"
)

// newGlide connects one GLIDE client for cfg's topology: the cluster
// client on a cluster; elsewhere the standalone client on the first
// server (the primary of a replicated topology), where the other clients
// connect too. GLIDE's request timeout is the call's timeout, so that its
// own bound and the harness's agree. Sentinel is refused: the Go client
// has no Sentinel mode, so it could only be pointed at today's primary
// and would not follow a failover, which is what a Sentinel run tests.
func newGlide(name string, cfg Config) (Client, error) {
	if cfg.Topology == topology.Sentinel {
		return nil, fmt.Errorf("client %s: Valkey GLIDE's Go client has no Sentinel mode (it cannot ask sentinels for the primary): run it on standalone, replicated or cluster", name)
	}
	addrs, err := glideAddrs(cfg)
	if err != nil {
		return nil, fmt.Errorf("client %s: %w", name, err)
	}
	silenceGlideLog()
	// With late replies on, GLIDE's connections go through a tap, as an
	// external adapter's do: its core dials past any Go dialer.
	addrMap, tp := cfg.AddrMap, (*tap)(nil)
	if cfg.Late != nil {
		if tp, _, addrMap, err = newTap(nil, cfg.AddrMap, false); err != nil {
			return nil, fmt.Errorf("client %s: tap: %w", name, err)
		}
	}
	resolve := glideResolver(addrMap)
	if cfg.Topology == topology.Cluster {
		cc := config.NewClusterClientConfiguration().WithRequestTimeout(cfg.Timeout).WithAddressResolver(resolve)
		for _, a := range addrs {
			cc.WithAddress(&a)
		}
		cl, err := glide.NewClusterClient(cc)
		if err != nil {
			tp.close()
			return nil, fmt.Errorf("client %s: connect to the cluster at %v: %w", name, cfg.Option.InitAddress, err)
		}
		return &glideClient{name: name, cfg: cfg, set: cl.SetWithOptions, custom: clusterCustom(cl), close: cl.Close, tap: tp}, nil
	}
	sc := config.NewClientConfiguration().WithRequestTimeout(cfg.Timeout).WithAddressResolver(resolve).WithAddress(&addrs[0])
	cl, err := glide.NewClient(sc)
	if err != nil {
		tp.close()
		h, p := resolve(addrs[0].Host, addrs[0].Port)
		return nil, fmt.Errorf("client %s: connect to %s:%d (dialed at %s): %w", name, addrs[0].Host, addrs[0].Port, net.JoinHostPort(h, strconv.Itoa(p)), err)
	}
	return &glideClient{name: name, cfg: cfg, set: cl.SetWithOptions, custom: cl.CustomCommand, close: cl.Close, tap: tp}, nil
}

// clusterCustom runs a custom command on the node GLIDE routes it to and
// returns that node's reply; a reply from several nodes means it was not
// routed by its key, which the lock cannot use.
func clusterCustom(cl *glide.ClusterClient) func(context.Context, []string) (any, error) {
	return func(ctx context.Context, args []string) (any, error) {
		v, err := cl.CustomCommand(ctx, args)
		if err != nil {
			return nil, err
		}
		if !v.IsSingleValue() {
			return nil, fmt.Errorf("GLIDE routed %s to several nodes (replies %v), not to its key's", args[0], v.MultiValue())
		}
		return v.SingleValue(), nil
	}
}

// glideAddrs are the addresses the client starts from: the ones the
// topology's nodes announce, which the resolver maps as it maps those
// GLIDE learns later (CLUSTER SLOTS).
func glideAddrs(cfg Config) ([]config.NodeAddress, error) {
	in := cfg.Option.InitAddress
	if len(in) == 0 {
		in = cfg.Addrs
	}
	if len(in) == 0 {
		return nil, fmt.Errorf("no server address to connect to")
	}
	var out []config.NodeAddress
	for _, a := range in {
		host, port, err := splitAddr(a)
		if err != nil {
			return nil, err
		}
		out = append(out, config.NodeAddress{Host: host, Port: port})
	}
	return out, nil
}

// glideResolver maps an address a node announces to the one this process
// dials (Config.AddrMap: the node, or its fault link's proxy). GLIDE dials
// from its Rust core, past the Go dialer the other clients use, so this
// is how its connections reach the nodes and pass the network faults.
func glideResolver(addrMap map[string]string) config.AddressResolver {
	return func(host string, port int) (string, int) {
		to, ok := addrMap[net.JoinHostPort(host, strconv.Itoa(port))]
		if !ok {
			return host, port
		}
		h, p, err := splitAddr(to)
		if err != nil {
			return host, port
		}
		return h, p
	}
}

func splitAddr(addr string) (string, int, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", 0, fmt.Errorf("server address %q: %w", addr, err)
	}
	p, err := strconv.Atoi(port)
	if err != nil {
		return "", 0, fmt.Errorf("server address %q: port: %w", addr, err)
	}
	return host, p, nil
}
