package topology

import (
	"errors"
	"io"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"time"
)

// proxy forwards the connections other processes (external adapters)
// open to one node, obeying the node's link fault. With no fault on it
// leaves the copying to the kernel (io.Copy between TCP connections
// splices); a fault's start or end interrupts the copy (kick), and with a
// fault on it reads a chunk at a time and delays or drops it.
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

// forward copies src to dst until either ends.
func (p *proxy) forward(dst, src *net.TCPConn) {
	defer dst.CloseWrite()
	buf := make([]byte, 32<<10)
	for {
		f := p.link.fault.Load()
		if f == nil {
			src.SetReadDeadline(time.Time{})
			// set stores the fault, then kicks: a fault stored before
			// the deadline was cleared above is seen here, one stored
			// after kicks this copy
			if p.link.fault.Load() != nil {
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

// kick interrupts every copy so that it sees the link's fault again.
func (p *proxy) kick() {
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
