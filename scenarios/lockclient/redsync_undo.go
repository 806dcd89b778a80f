package lockclient

import (
	"context"
	"strings"
	"sync"

	redsyncredis "github.com/go-redsync/redsync/v4/redis"

	"github.com/lockcheck/lockcheck/history"
)

// redsync gives back, inside the acquire, whatever an attempt that did
// not win may have taken: a node's SET NX answered too late (redsync bounds
// each node by 5% of the TTL) or a win that took longer than its validity
// is followed by its delete script before TryLockContext returns. The
// history must show that release, or the key's value, seen by the
// observer, belongs to an acquire that seemingly held it past its return.
// undoWatch sees the delete script go out during an acquire, on a
// single-node redsync (a Redlock's nodes are not observed).

// undoWatch records the release redsync runs inside one acquire.
type undoWatch struct {
	clock func() int64
	mu    sync.Mutex
	armed bool
	undo  *Undo
}

// arm starts watching an acquire; taken ends it and returns the release
// redsync ran meanwhile, if it ran one.
func (w *undoWatch) arm() {
	w.mu.Lock()
	w.armed, w.undo = true, nil
	w.mu.Unlock()
}

func (w *undoWatch) taken() *Undo {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.armed = false
	return w.undo
}

func (w *undoWatch) watching() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.armed
}

func (w *undoWatch) record(u *Undo) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.armed && w.undo == nil {
		w.undo = u
	}
}

// undoPool is a redsync pool whose connections report the delete script.
type undoPool struct {
	redsyncredis.Pool
	w *undoWatch
}

func (p undoPool) Get(ctx context.Context) (redsyncredis.Conn, error) {
	c, err := p.Pool.Get(ctx)
	if err != nil {
		return nil, err
	}
	return undoConn{Conn: c, w: p.w, ctx: ctx}, nil
}

type undoConn struct {
	redsyncredis.Conn
	w   *undoWatch
	ctx context.Context
}

// Eval runs a script; redsync's delete script (the only one with DEL)
// during a watched acquire is recorded with its times and outcome: 1 is a
// delete of the acquire's own value, 0 or -1 none, an error unknown.
func (c undoConn) Eval(s *redsyncredis.Script, keysAndArgs ...any) (any, error) {
	if !strings.Contains(s.Src, "DEL") || !c.w.watching() {
		return c.Conn.Eval(s, keysAndArgs...)
	}
	u := &Undo{Call: c.w.clock()}
	v, err := c.Conn.Eval(s, keysAndArgs...)
	u.Return = c.w.clock()
	switch {
	case err != nil:
		u.Release = resultOf(c.ctx, err)
	case v == int64(1):
		u.Release = okResult()
	default:
		u.Release = failed("")
	}
	c.w.record(u)
	return v, err
}

// undone reads the release a library (redsync, valkeylock) ran inside a
// failed acquire (r): one that deleted the acquire's value says the
// acquire held the lock until it; one of unknown outcome says it may
// have (Undo.Unsure); one that deleted nothing leaves r as it is.
func undone(r Result, u *Undo) Result {
	if u == nil || u.Release.Outcome == history.Fail {
		return r
	}
	r.Undo = u
	if u.Release.Outcome == history.OK {
		r.Outcome, r.Err = history.Fail, "acquired, then given back by the library: "+r.Err
		return r
	}
	u.Unsure = true
	r.Outcome = history.Unknown
	r.Err = "gave up, release unknown: " + u.Release.Err
	return r
}
