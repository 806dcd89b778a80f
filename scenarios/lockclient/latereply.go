package lockclient

import (
	"bytes"
	"context"
	"crypto/tls"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"time"
)

// A late reply is a lock call whose command reaches the server and takes
// effect, while its reply reaches the client only after the client's own
// call timeout: the client must decide, on its timeout path, what a call
// of unknown outcome means. A client frozen inside a call (Pause) finds
// its reply waiting when it wakes and never times out; a late reply is the
// network's or the server's slowness instead, with the client running.
//
// In-process clients get late replies through their connections
// (LateReply wraps their dialer), external adapters through their tap.

// Hold is one planned late reply: the first reply to a command that names
// Key is held back For, or until Wake closes (the run is over), or, on a
// connection with a read deadline, until that deadline, when the client's
// read times out.
type Hold struct {
	// Key is the lock key: only a command that carries it takes the hold,
	// not a handshake or a health check that shares the connection.
	Key string
	// For is how long the reply is held: past the client's call timeout.
	For  time.Duration
	Wake <-chan struct{}
	// taken says a command took the hold.
	taken atomic.Bool
}

// Taken says whether a command took the hold: its reply was held back.
func (h *Hold) Taken() bool { return h != nil && h.taken.Load() }

type holdKey struct{}

// WithHold gives the call h; nil leaves ctx as it is. An external
// adapter's call takes it through its tap.
func WithHold(ctx context.Context, h *Hold) context.Context {
	if h == nil {
		return ctx
	}
	return context.WithValue(ctx, holdKey{}, h)
}

func holdOf(ctx context.Context) *Hold {
	h, _ := ctx.Value(holdKey{}).(*Hold)
	return h
}

// LateReply arms late replies on the connections of one logical client:
// the worker arms a Hold before a call and disarms it after. A nil
// LateReply arms nothing.
type LateReply struct {
	armed atomic.Pointer[Hold]
}

// Arm makes the next command that names h.Key, on any of the client's
// connections, have its reply held back.
func (l *LateReply) Arm(h *Hold) {
	if l != nil {
		l.armed.Store(h)
	}
}

// Disarm takes back a hold no command took.
func (l *LateReply) Disarm() {
	if l != nil {
		l.armed.Store(nil)
	}
}

// claim takes the armed hold for a write that carries its key.
func (l *LateReply) claim(p []byte) *Hold {
	h := l.armed.Load()
	if h == nil || !bytes.Contains(p, []byte(h.Key)) || !l.armed.CompareAndSwap(h, nil) || !h.taken.CompareAndSwap(false, true) {
		return nil
	}
	return h
}

// hold arms t for h: the first chunk to a data node that names h.Key
// goes out, and no reply reaches the process behind the tap (an external
// adapter, GLIDE's core) until h.For passes or h.Wake closes.
func (t *tap) hold(h *Hold) {
	t.armFor(h.Key, func(func()) {
		if !h.taken.CompareAndSwap(false, true) {
			return
		}
		w := time.NewTimer(h.For)
		defer w.Stop()
		select {
		case <-w.C:
		case <-h.Wake:
		}
	})
}

// DialFunc is valkey-go's ClientOption.DialCtxFn.
type DialFunc func(ctx context.Context, addr string, d *net.Dialer, cfg *tls.Config) (net.Conn, error)

// Wrap returns dial with its connections able to hold a reply back; a nil
// LateReply returns dial as it is.
func (l *LateReply) Wrap(dial DialFunc) DialFunc {
	if l == nil {
		return dial
	}
	return func(ctx context.Context, addr string, d *net.Dialer, cfg *tls.Config) (net.Conn, error) {
		var c net.Conn
		var err error
		if dial != nil {
			c, err = dial(ctx, addr, d, cfg)
		} else if cfg != nil {
			c, err = (&tls.Dialer{NetDialer: d, Config: cfg}).DialContext(ctx, "tcp", addr)
		} else {
			c, err = d.DialContext(ctx, "tcp", addr)
		}
		if err != nil {
			return nil, err
		}
		return &lateConn{Conn: c, late: l, closed: make(chan struct{}), moved: make(chan struct{})}, nil
	}
}

// lateConn is a client connection that holds back the reply to a command
// that took its LateReply's hold. A read deadline that comes first times
// the read out, as the network's slowness would; the held bytes stay held
// until the hold's end, as they would be still on their way.
type lateConn struct {
	net.Conn
	late    *LateReply
	pending atomic.Pointer[Hold]
	mu      sync.Mutex
	// held are the bytes of a held reply, due at until, or once wake
	// closes.
	held  []byte
	until time.Time
	wake  <-chan struct{}
	// readBy is the read deadline; moved closes (and is replaced) when
	// it changes, so that a held read sees the new one.
	readBy    time.Time
	moved     chan struct{}
	closed    chan struct{}
	closeOnce sync.Once
}

func (c *lateConn) Write(p []byte) (int, error) {
	if h := c.late.claim(p); h != nil {
		c.pending.Store(h)
	}
	return c.Conn.Write(p)
}

func (c *lateConn) Read(p []byte) (int, error) {
	c.mu.Lock()
	held := len(c.held) > 0
	c.mu.Unlock()
	if !held {
		n, err := c.Conn.Read(p)
		h := c.pending.Load()
		if n == 0 || h == nil || !c.pending.CompareAndSwap(h, nil) {
			return n, err
		}
		c.mu.Lock()
		c.held, c.until, c.wake = append([]byte(nil), p[:n]...), time.Now().Add(h.For), h.Wake
		c.mu.Unlock()
	}
	if !c.wait() {
		return 0, os.ErrDeadlineExceeded
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	n := copy(p, c.held)
	c.held = c.held[n:]
	return n, nil
}

// wait waits for the held bytes to be due, following the read deadline
// as it moves: false when the deadline came first.
func (c *lateConn) wait() bool {
	c.mu.Lock()
	until, wake := c.until, c.wake
	c.mu.Unlock()
	due := time.NewTimer(time.Until(until))
	defer due.Stop()
	for {
		c.mu.Lock()
		by, moved := c.readBy, c.moved
		c.mu.Unlock()
		var deadline <-chan time.Time
		var t *time.Timer
		if !by.IsZero() {
			t = time.NewTimer(time.Until(by))
			deadline = t.C
		}
		ok, again := true, false
		select {
		case <-due.C:
		case <-wake:
		case <-c.closed:
		case <-deadline:
			ok = false
		case <-moved:
			again = true // wait again under the new deadline
		}
		if t != nil {
			t.Stop()
		}
		if !again {
			return ok
		}
	}
}

func (c *lateConn) SetDeadline(t time.Time) error {
	c.setReadBy(t)
	return c.Conn.SetDeadline(t)
}

func (c *lateConn) SetReadDeadline(t time.Time) error {
	c.setReadBy(t)
	return c.Conn.SetReadDeadline(t)
}

func (c *lateConn) setReadBy(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if t.Equal(c.readBy) {
		return
	}
	c.readBy = t
	close(c.moved)
	c.moved = make(chan struct{})
}

func (c *lateConn) Close() error {
	c.closeOnce.Do(func() { close(c.closed) })
	return c.Conn.Close()
}
