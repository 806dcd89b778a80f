package topology

import (
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// proxy forwards the connections other processes (external adapters)
// open to one node, obeying the node's link fault: it copies a chunk at a
// time and delays or drops each chunk as the fault in force when it
// arrived says.
type proxy struct {
	ln       net.Listener
	link     *nodeLink
	upstream atomic.Pointer[string]
	mu       sync.Mutex
	conns    map[*pipe]bool
	closed   bool
}

// pipe is one client connection and its connection to the node.
type pipe struct{ client, server *net.TCPConn }

func listen(upstream string, link *nodeLink) (*proxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &proxy{ln: ln, link: link, conns: map[*pipe]bool{}}
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

// forward copies src to dst until either ends. The fault is read after
// each read returns, never before it blocks: a fault set before the bytes
// were sent is always the one they meet (the client's send comes after
// the set, the read after the send), so no copy can be caught in a
// kernel copy that knows nothing of it. Copying a chunk at a time costs
// little next to the two extra sockets every proxied call crosses.
func (p *proxy) forward(dst, src *net.TCPConn) {
	defer dst.CloseWrite()
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			f := p.link.fault.Load()
			if f != nil && !f.blackhole {
				time.Sleep(f.delay())
			}
			if f == nil || !f.blackhole {
				if _, werr := dst.Write(buf[:n]); werr != nil {
					return
				}
			}
		}
		if err != nil {
			return // EOF or a broken connection
		}
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
