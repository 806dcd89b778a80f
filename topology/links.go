package topology

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// links are the clients' way to the nodes. Clients dial a node's container
// address when the host reaches it (a local engine), which skips Docker's
// port-mapping hop, else its mapped port. With Options.ProxyClients each
// node also gets a link (nodeLink) where network faults act on what
// clients send and receive, while the nodes' own links (to replicas and
// sentinels) and the harness's control connections stay untouched:
//
//   - lock clients in this process (valkey-go, go-redis: everything that
//     dials through ClientOption's dialer) get their connections wrapped
//     (faultConn), so a fault acts on their own reads and writes with no
//     extra hop, and with no fault on costs an atomic load per call;
//   - other processes (external adapters) dial a proxy per node on the
//     host's loopback (ClientAddr), which forwards to the node and obeys
//     the same fault.
//
// Measured (go run ./bench -only throughput, native, 8 clients, README):
// the wrapped connections cost no measurable throughput, the proxy about
// half of it (every message crosses one more process hop on 2 cores), so
// the proxy carries only the processes that cannot be wrapped. Toxiproxy
// as a library, tried first, cost a quarter more than a plain proxy.
type links struct {
	mu      sync.Mutex
	proxied bool
	// upstream is where each node is dialed, by the address it announces.
	upstream map[string]string
	// nodes are the nodes' fault links, by announced address, with
	// ProxyClients.
	nodes map[string]*nodeLink
	// byName finds a node's link for the fault controls.
	byName map[string]*nodeLink
	// direct says whether the host reaches container addresses; decided
	// on the first node.
	direct *bool
}

func newLinks(proxied bool) *links {
	return &links{proxied: proxied, upstream: map[string]string{}, nodes: map[string]*nodeLink{}, byName: map[string]*nodeLink{}}
}

// route records where node n, whose port is mapped on the host at
// mapped, is dialed, and returns the address another process dials for
// it: the node itself, or with ProxyClients its link's proxy (made on the
// first call, pointed at the node again after a restart).
func (l *links) route(ctx context.Context, n *Node, mapped string) (string, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.direct == nil {
		d := reachable(ctx, n.Internal())
		l.direct = &d
	}
	upstream := mapped
	if *l.direct {
		upstream = n.Internal()
	}
	l.upstream[n.Internal()] = upstream
	if !l.proxied {
		return upstream, nil
	}
	nl := l.nodes[n.Internal()]
	if nl == nil {
		nl = &nodeLink{conns: map[*faultConn]bool{}}
		p, err := listen(upstream, nl)
		if err != nil {
			return "", fmt.Errorf("client proxy of %s: %w", n.Name, err)
		}
		nl.proxy = p
		l.nodes[n.Internal()] = nl
		l.byName[n.Name] = nl
	}
	nl.proxy.setUpstream(upstream)
	return nl.proxy.ln.Addr().String(), nil
}

// dial is the valkey-go DialCtxFn of in-process clients: it dials the node
// an announced address names and, with ProxyClients, wraps the connection
// in the node's fault link.
func (l *links) dial(ctx context.Context, addr string, d *net.Dialer, cfg *tls.Config) (net.Conn, error) {
	l.mu.Lock()
	target, ok := l.upstream[addr]
	nl := l.nodes[addr]
	l.mu.Unlock()
	if !ok {
		target = addr
	}
	if cfg != nil {
		td := tls.Dialer{NetDialer: d, Config: cfg}
		return td.DialContext(ctx, "tcp", target)
	}
	c, err := d.DialContext(ctx, "tcp", target)
	if err != nil || nl == nil {
		return c, err
	}
	return nl.wrap(c.(*net.TCPConn)), nil
}

// reachable says whether the host can dial a container's own address. A
// refused connection counts: the node may not listen yet, but its
// container answered.
func reachable(ctx context.Context, addr string) bool {
	d := net.Dialer{Timeout: 500 * time.Millisecond}
	c, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return errors.Is(err, syscall.ECONNREFUSED)
	}
	c.Close()
	return true
}

func (l *links) link(name string) *nodeLink {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.byName[name]
}

// forget stops the proxy of a node that is removed for good and closes
// its clients' connections.
func (l *links) forget(n *Node) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if nl := l.nodes[n.Internal()]; nl != nil {
		nl.proxy.close()
		nl.reset()
	}
	delete(l.nodes, n.Internal())
	delete(l.byName, n.Name)
	delete(l.upstream, n.Internal())
}

// close stops every proxy and closes the clients' connections.
func (l *links) close() {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, nl := range l.nodes {
		nl.proxy.close()
		nl.reset()
	}
	l.nodes, l.byName = map[string]*nodeLink{}, map[string]*nodeLink{}
}

// ClientPath says how clients reach the nodes: "container address" or
// "mapped port", with ProxyClients "through fault links" (in-process
// clients' connections wrapped, other processes through a proxy).
func (t *Topology) ClientPath() string {
	t.links.mu.Lock()
	defer t.links.mu.Unlock()
	path := "mapped port"
	if t.links.direct != nil && *t.links.direct {
		path = "container address"
	}
	if t.links.proxied {
		path += " through fault links"
	}
	return path
}

// linkFault is what a link does to the bytes it carries; nil: nothing.
type linkFault struct {
	latency, jitter time.Duration
	blackhole       bool
}

// delay draws one chunk's delay.
func (f *linkFault) delay() time.Duration {
	d := f.latency
	if f.jitter > 0 {
		d += time.Duration(rand.Int64N(int64(2*f.jitter))) - f.jitter
	}
	return max(d, 0)
}

// nodeLink is one node's client links: the fault on them, the in-process
// clients' connections and the proxy other processes dial.
type nodeLink struct {
	fault atomic.Pointer[linkFault]
	proxy *proxy
	mu    sync.Mutex
	conns map[*faultConn]bool
}

// set puts f on (nil: off) for every connection, wrapped or proxied.
func (nl *nodeLink) set(f *linkFault) {
	nl.fault.Store(f)
}

// reset resets every client connection to the node, wrapped and proxied,
// and says how many there were.
func (nl *nodeLink) reset() int {
	nl.mu.Lock()
	n := len(nl.conns)
	for c := range nl.conns {
		c.reset()
	}
	clear(nl.conns)
	nl.mu.Unlock()
	return n + nl.proxy.reset()
}

// nodeLink is node n's fault link.
func (n *Node) nodeLink() (*nodeLink, error) {
	nl := n.topo.links.link(n.Name)
	if nl == nil {
		return nil, fmt.Errorf("%s has no client links to fault: start the topology with ProxyClients", n.Name)
	}
	return nl, nil
}

// SlowLinks delays every chunk clients send to and receive from node n by
// latency, give or take jitter, each way, until HealLinks.
func (n *Node) SlowLinks(latency, jitter time.Duration) error {
	nl, err := n.nodeLink()
	if err != nil {
		return err
	}
	nl.set(&linkFault{latency: latency, jitter: jitter})
	return nil
}

// BlackholeLinks swallows every byte clients send to and receive from
// node n, keeping their connections open, until HealLinks; the node
// still serves its replicas and sentinels. Bytes swallowed stay lost: the
// connections that carried them are out of step, and clients time out.
func (n *Node) BlackholeLinks() error {
	nl, err := n.nodeLink()
	if err != nil {
		return err
	}
	nl.set(&linkFault{blackhole: true})
	return nil
}

// HealLinks ends SlowLinks and BlackholeLinks.
func (n *Node) HealLinks() error {
	nl, err := n.nodeLink()
	if err != nil {
		return err
	}
	nl.set(nil)
	return nil
}

// ResetLinks resets (TCP RST) every client connection to node n now, and
// says how many there were; new connections are served.
func (n *Node) ResetLinks() (int, error) {
	nl, err := n.nodeLink()
	if err != nil {
		return 0, err
	}
	return nl.reset(), nil
}
