package topology

import (
	"net"
	"os"
	"sync/atomic"
	"syscall"
	"time"
)

// faultConn is an in-process client's connection to a node, with the
// node's link fault applied in the client's own reads and writes: what
// the proxy does to a chunk it forwards, done where the chunk is written
// or read, so that no extra hop slows the clients when no fault is on.
// It embeds net.Conn, not *net.TCPConn, so that no copy shortcut
// (ReadFrom, WriteTo) can go around Read and Write.
type faultConn struct {
	net.Conn
	tcp      *net.TCPConn
	link     *nodeLink
	wasReset atomic.Bool
}

func (nl *nodeLink) wrap(c *net.TCPConn) *faultConn {
	fc := &faultConn{Conn: c, tcp: c, link: nl}
	nl.mu.Lock()
	nl.conns[fc] = true
	nl.mu.Unlock()
	return fc
}

// Write sends b after the fault's delay; into a blackhole b is swallowed
// (reported written, never sent), as on a link that drops packets.
func (c *faultConn) Write(b []byte) (int, error) {
	if f := c.link.fault.Load(); f != nil {
		if f.blackhole {
			return len(b), nil
		}
		time.Sleep(f.delay())
	}
	n, err := c.Conn.Write(b)
	return n, c.why(err)
}

// Read returns what the node sent after the fault's delay; what arrives
// during a blackhole is dropped and the read waits on, within the
// caller's deadline.
func (c *faultConn) Read(b []byte) (int, error) {
	for {
		n, err := c.Conn.Read(b)
		if n > 0 {
			if f := c.link.fault.Load(); f != nil {
				if f.blackhole {
					if err != nil {
						return 0, c.why(err)
					}
					continue
				}
				time.Sleep(f.delay())
			}
		}
		return n, c.why(err)
	}
}

func (c *faultConn) Close() error {
	c.link.mu.Lock()
	delete(c.link.conns, c)
	c.link.mu.Unlock()
	err := c.Conn.Close()
	if c.wasReset.Load() {
		return nil // reset closed it
	}
	return err
}

// reset aborts the connection: the node gets a TCP RST, and the client's
// reads and writes fail as on a connection the peer reset.
func (c *faultConn) reset() {
	c.wasReset.Store(true)
	c.tcp.SetLinger(0)
	c.Conn.Close()
}

// why gives a reset connection's errors the reason a client sees when
// the network resets it (ECONNRESET), not "use of closed connection".
func (c *faultConn) why(err error) error {
	if err == nil || !c.wasReset.Load() {
		return err
	}
	return &net.OpError{Op: "read", Net: "tcp", Source: c.LocalAddr(), Addr: c.RemoteAddr(), Err: os.NewSyscallError("read", syscall.ECONNRESET)}
}
