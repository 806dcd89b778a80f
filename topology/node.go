package topology

import (
	"context"
	"fmt"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"time"

	tc "github.com/testcontainers/testcontainers-go"
	"github.com/valkey-io/valkey-go"
)

// Role is what a node does in its topology at a moment.
type Role string

const (
	RolePrimary  Role = "primary"
	RoleReplica  Role = "replica"
	RoleSentinel Role = "sentinel"
)

// Node is one server or sentinel process in its own container.
type Node struct {
	// Name is the node's name within its topology (n0, n1, s0...).
	Name string
	// IP is the node's fixed address on the topology's network.
	IP netip.Addr
	// Port is the port inside the container.
	Port int
	// Sentinel marks a sentinel process rather than a data server.
	Sentinel bool

	topo *Topology
	c    *tc.DockerContainer
	// image is the image the node's container runs (Reinstall changes it).
	image string
	// pastLogs are the logs of the containers Reinstall replaced.
	pastLogs []byte

	mu     sync.Mutex
	client valkey.Client
}

// Internal is the address other nodes use, as Sentinel and MOVED name it.
func (n *Node) Internal() string {
	return netip.AddrPortFrom(n.IP, uint16(n.Port)).String()
}

// Addr is the node's port mapped on the host: what the harness's control
// connections dial, and what stays valid after lockcheck exits (lockcheck
// up).
func (n *Node) Addr() string { return n.topo.addrs.resolve(n.Internal()) }

// ClientAddr is the address a lock client in another process (an
// external adapter) dials: the node, or with ProxyClients the node's
// client proxy, where network faults act (see links). In-process clients
// dial through ClientOption instead.
func (n *Node) ClientAddr() string { return n.topo.clients.resolve(n.Internal()) }

// ContainerID is the Docker container of the node.
func (n *Node) ContainerID() string { return n.c.GetContainerID() }

// Client is a client connected to this one node alone (no redirects, no
// Sentinel), for inspecting and steering it.
func (n *Node) Client() (valkey.Client, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.client != nil {
		return n.client, nil
	}
	c, err := valkey.NewClient(valkey.ClientOption{
		InitAddress:       []string{n.Internal()},
		DialCtxFn:         n.topo.addrs.dial,
		ForceSingleClient: true,
		DisableCache:      true,
		DisableRetry:      true,
		AlwaysRESP2:       true,
		ConnWriteTimeout:  2 * time.Second,
	})
	if err != nil {
		return nil, fmt.Errorf("connect to %s (%s): %w", n.Name, n.Addr(), err)
	}
	n.client = c
	return c, nil
}

// Do runs one command on this node and returns its reply as ReplyText
// renders it.
func (n *Node) Do(ctx context.Context, args ...string) (string, error) {
	c, err := n.Client()
	if err != nil {
		return "", err
	}
	s, err := ReplyText(c.Do(ctx, c.B().Arbitrary(args...).Build()))
	if err != nil {
		return "", fmt.Errorf("%s on %s: %w", args[0], n.Name, err)
	}
	return s, nil
}

// Info returns one INFO section as a map.
func (n *Node) Info(ctx context.Context, section string) (map[string]string, error) {
	s, err := n.Do(ctx, "INFO", section)
	if err != nil {
		return nil, err
	}
	return parseInfo(s), nil
}

// Role asks the node what it is now.
func (n *Node) Role(ctx context.Context) (Role, error) {
	if n.Sentinel {
		return RoleSentinel, nil
	}
	info, err := n.Info(ctx, "replication")
	if err != nil {
		return "", err
	}
	switch info["role"] {
	case "master":
		return RolePrimary, nil
	case "slave":
		return RoleReplica, nil
	}
	return "", fmt.Errorf("%s reports role %q", n.Name, info["role"])
}

// Version is the server's real version as INFO server reports it.
func (n *Node) Version(ctx context.Context) (string, error) {
	info, err := n.Info(ctx, "server")
	if err != nil {
		return "", err
	}
	field := n.topo.Build.VersionField()
	if v := info[field]; v != "" {
		return v, nil
	}
	return info["redis_version"], nil
}

func (n *Node) closeClient() {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.client != nil {
		n.client.Close()
		n.client = nil
	}
}

func parseInfo(s string) map[string]string {
	m := map[string]string{}
	for _, line := range strings.Split(s, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || line[0] == '#' {
			continue
		}
		if k, v, ok := strings.Cut(line, ":"); ok {
			m[k] = v
		}
	}
	return m
}

func atoi(s string) int {
	i, _ := strconv.Atoi(s)
	return i
}
