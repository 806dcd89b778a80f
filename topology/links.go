package topology

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// links are the clients' way to the nodes. Without Options.ProxyClients
// clients dial a node's container address when the host reaches it (a
// local engine), which skips Docker's port-mapping hop, else its mapped
// port. With it, clients dial an in-process proxy per node on the host's
// loopback, so that faults can slow, swallow or reset what clients send
// and receive while the nodes' own links (to replicas and sentinels) and
// the harness's control connections stay untouched.
//
// Measured (go run ./bench -only throughput, native, 8 clients): 31k lock
// operations a second to container addresses, 12k through the mapped
// ports, 10k through the proxy. With no fault on, the proxy leaves the
// copying to the kernel (io.Copy between TCP connections splices);
// Toxiproxy as a library, tried first, cost a quarter more, so the few
// faults lockcheck needs are here instead.
type links struct {
	mu      sync.Mutex
	proxied bool
	proxies map[string]*proxy // by node name
	// direct says whether the host reaches container addresses; decided
	// on the first node.
	direct *bool
}

func newLinks(proxied bool) *links { return &links{proxied: proxied, proxies: map[string]*proxy{}} }

// route returns the address clients dial for node n, whose port is
// mapped on the host at mapped; with proxies, it makes n's proxy or
// points it at the node again after a restart.
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
	if !l.proxied {
		return upstream, nil
	}
	p := l.proxies[n.Name]
	if p == nil {
		var err error
		if p, err = listen(upstream); err != nil {
			return "", fmt.Errorf("client proxy of %s: %w", n.Name, err)
		}
		l.proxies[n.Name] = p
	}
	p.setUpstream(upstream)
	return p.ln.Addr().String(), nil
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

func (l *links) proxy(name string) *proxy {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.proxies[name]
}

// close stops every proxy and closes the clients' connections.
func (l *links) close() {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, p := range l.proxies {
		p.close()
	}
	l.proxies = map[string]*proxy{}
}

// ClientPath says how clients reach the nodes: "container address",
// "mapped port", or either "through a proxy" (Options.ProxyClients).
func (t *Topology) ClientPath() string {
	t.links.mu.Lock()
	defer t.links.mu.Unlock()
	path := "mapped port"
	if t.links.direct != nil && *t.links.direct {
		path = "container address"
	}
	if t.links.proxied {
		path += " through a proxy"
	}
	return path
}

// linkFault is what a proxy does to the bytes it carries; nil: nothing.
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

// proxy forwards the connections of one node's clients.
type proxy struct {
	ln       net.Listener
	upstream atomic.Pointer[string]
	fault    atomic.Pointer[linkFault]
	mu       sync.Mutex
	conns    map[*pipe]bool
	closed   bool
}

// pipe is one client connection and its connection to the node.
type pipe struct{ client, server *net.TCPConn }

func listen(upstream string) (*proxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &proxy{ln: ln, conns: map[*pipe]bool{}}
	p.upstream.Store(&upstream)
	go p.accept()
	return p, nil
}

func (p *proxy) setUpstream(addr string) { p.upstream.Store(&addr) }

func (p *proxy) accept() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		go p.serve(c.(*net.TCPConn))
	}
}

func (p *proxy) serve(client *net.TCPConn) {
	d := net.Dialer{Timeout: 5 * time.Second}
	s, err := d.Dial("tcp", *p.upstream.Load())
	if err != nil {
		client.Close()
		return
	}
	pp := &pipe{client: client, server: s.(*net.TCPConn)}
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		pp.close()
		return
	}
	p.conns[pp] = true
	p.mu.Unlock()
	var wg sync.WaitGroup
	wg.Go(func() { p.forward(pp.server, pp.client) })
	wg.Go(func() { p.forward(pp.client, pp.server) })
	wg.Wait()
	pp.close()
	p.mu.Lock()
	delete(p.conns, pp)
	p.mu.Unlock()
}

// forward copies src to dst until either ends. With no fault it leaves
// the copying to the kernel; a fault's start or end interrupts the copy
// (kick), and with a fault on it reads a chunk at a time and delays or
// drops it.
func (p *proxy) forward(dst, src *net.TCPConn) {
	defer dst.CloseWrite()
	buf := make([]byte, 32<<10)
	for {
		f := p.fault.Load()
		if f == nil {
			src.SetReadDeadline(time.Time{})
			// set stores the fault, then kicks: a fault stored before
			// the deadline was cleared above is seen here, one stored
			// after kicks this copy
			if p.fault.Load() != nil {
				continue
			}
			if _, err := io.Copy(dst, src); !errors.Is(err, os.ErrDeadlineExceeded) {
				return // EOF or a broken connection
			}
			continue
		}
		// notice the fault's end within a tenth of a second
		src.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
		n, err := src.Read(buf)
		if n > 0 && !f.blackhole {
			time.Sleep(f.delay())
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil && !errors.Is(err, os.ErrDeadlineExceeded) {
			return
		}
	}
}

// set puts f on (nil: off) and interrupts every copy so that it sees it.
func (p *proxy) set(f *linkFault) {
	p.fault.Store(f)
	p.mu.Lock()
	defer p.mu.Unlock()
	past := time.Unix(1, 0)
	for c := range p.conns {
		c.client.SetReadDeadline(past)
		c.server.SetReadDeadline(past)
	}
}

// reset resets every client connection: the client gets a TCP RST.
func (p *proxy) reset() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	for c := range p.conns {
		c.client.SetLinger(0)
		c.close()
	}
	return len(p.conns)
}

func (c *pipe) close() {
	c.client.Close()
	c.server.Close()
}

func (p *proxy) close() {
	p.mu.Lock()
	p.closed = true
	p.mu.Unlock()
	p.ln.Close()
	p.reset()
}

// clientProxy is node n's proxy.
func (n *Node) clientProxy() (*proxy, error) {
	p := n.topo.links.proxy(n.Name)
	if p == nil {
		return nil, fmt.Errorf("%s has no client proxy: start the topology with ProxyClients", n.Name)
	}
	return p, nil
}

// SlowLinks delays every chunk clients send to and receive from node n by
// latency, give or take jitter, each way, until HealLinks.
func (n *Node) SlowLinks(latency, jitter time.Duration) error {
	p, err := n.clientProxy()
	if err != nil {
		return err
	}
	p.set(&linkFault{latency: latency, jitter: jitter})
	return nil
}

// BlackholeLinks swallows every byte clients send to and receive from
// node n, keeping their connections open, until HealLinks; the node
// still serves its replicas and sentinels. Bytes swallowed stay lost: the
// connections that carried them are out of step, and clients time out.
func (n *Node) BlackholeLinks() error {
	p, err := n.clientProxy()
	if err != nil {
		return err
	}
	p.set(&linkFault{blackhole: true})
	return nil
}

// HealLinks ends SlowLinks and BlackholeLinks.
func (n *Node) HealLinks() error {
	p, err := n.clientProxy()
	if err != nil {
		return err
	}
	p.set(nil)
	return nil
}

// ResetLinks resets (TCP RST) every client connection to node n now, and
// says how many there were; new connections are served.
func (n *Node) ResetLinks() (int, error) {
	p, err := n.clientProxy()
	if err != nil {
		return 0, err
	}
	return p.reset(), nil
}
