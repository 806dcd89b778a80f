package lockclient

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/go-redsync/redsync/v4"
	redsyncredis "github.com/go-redsync/redsync/v4/redis"
	"github.com/go-redsync/redsync/v4/redis/valkeygo"
	"github.com/valkey-io/valkey-go"
	"github.com/valkey-io/valkey-go/valkeycompat"

	"github.com/lockcheck/lockcheck/history"
)

// redsyncClient adapts github.com/go-redsync/redsync/v4 with its valkey-go
// pools: one per node of a Redlock topology (Config.Nodes), which is
// Redlock, else one pool, a single-instance lock. The token is the
// value redsync stores (Mutex.Value); extend and release rebuild the mutex
// from it with WithValue, so no state is kept per acquisition.
type redsyncClient struct {
	name string
	cfg  Config
	vks  []valkey.Client
	rs   *redsync.Redsync
	// undo sees the release redsync runs inside an acquire, on one node;
	// nil on a Redlock.
	undo *undoWatch
}

func newRedsync(name string, cfg Config) (Client, error) {
	opts := cfg.Nodes
	if len(opts) == 0 {
		opts = []valkey.ClientOption{cfg.Option}
	}
	c := &redsyncClient{name: name, cfg: cfg}
	var pools []redsyncredis.Pool
	for i, o := range opts {
		vk, err := valkey.NewClient(o)
		if err != nil {
			c.Close()
			return nil, fmt.Errorf("client %s: connect to node %d: %w", name, i, err)
		}
		c.vks = append(c.vks, vk)
		pools = append(pools, valkeygo.NewPool(valkeycompat.NewAdapter(vk)))
	}
	if len(pools) == 1 {
		c.undo = &undoWatch{clock: cfg.Clock}
		pools[0] = undoPool{Pool: pools[0], w: c.undo}
	}
	c.rs = redsync.New(pools...)
	return c, nil
}

func (c *redsyncClient) Name() string { return c.name }

func (c *redsyncClient) Close() error {
	for _, vk := range c.vks {
		vk.Close()
	}
	return nil
}

func (c *redsyncClient) Acquire(ctx context.Context, key string, ttl time.Duration) Result {
	ctx, cancel := WithTimeout(ctx, c.cfg.Timeout)
	defer cancel()
	// the value is drawn here, so that an acquire with no reply in time,
	// which may hold the lock, names it
	token := newToken()
	m := c.rs.NewMutex(key, redsync.WithExpiry(ttl), redsync.WithTries(1),
		redsync.WithGenValueFunc(func() (string, error) { return token, nil }))
	if c.undo != nil {
		c.undo.arm()
	}
	err := m.TryLockContext(ctx)
	var u *Undo
	if c.undo != nil {
		u = c.undo.taken()
	}
	if err != nil {
		r := redsyncResult(ctx, err)
		if r.Outcome == history.Unknown {
			r.Token = token
		}
		if r = undone(r, u); r.Undo != nil {
			r.Token = token
		}
		return r
	}
	return Result{Outcome: history.OK, Token: m.Value()}
}

func (c *redsyncClient) Extend(ctx context.Context, key, token string, ttl time.Duration) Result {
	ctx, cancel := WithTimeout(ctx, c.cfg.Timeout)
	defer cancel()
	m := c.rs.NewMutex(key, redsync.WithExpiry(ttl), redsync.WithValue(token))
	done, err := m.ExtendContext(ctx)
	if done {
		return okResult()
	}
	return redsyncResult(ctx, err)
}

func (c *redsyncClient) Release(ctx context.Context, key, token string) Result {
	ctx, cancel := WithTimeout(ctx, c.cfg.Timeout)
	defer cancel()
	m := c.rs.NewMutex(key, redsync.WithValue(token))
	done, err := m.UnlockContext(ctx)
	if done {
		return okResult()
	}
	return redsyncResult(ctx, err)
}

// redsyncResult reads redsync's errors: a node's error carries the server's
// reply or the network failure; "taken", "expired" and "failed" are plain
// refusals.
func redsyncResult(ctx context.Context, err error) Result {
	var re redsync.RedisError
	var rep *redsync.RedisError
	switch {
	case errors.As(err, &re):
		return redsyncNodeResult(ctx, re.Err)
	case errors.As(err, &rep):
		return redsyncNodeResult(ctx, rep.Err)
	case err == nil:
		return failed("")
	}
	var taken *redsync.ErrTaken
	if errors.As(err, &taken) || errors.Is(err, redsync.ErrFailed) || errors.Is(err, redsync.ErrLockAlreadyExpired) || errors.Is(err, redsync.ErrExtendFailed) {
		return failed("")
	}
	return resultOf(ctx, err)
}

// redsyncNodeResult explains a deadline that redsync set itself: it bounds
// each node's call by TimeoutFactor (5%) of the TTL, far below the
// harness's own deadline for short TTLs.
func redsyncNodeResult(ctx context.Context, err error) Result {
	r := resultOf(ctx, err)
	if r.Outcome == history.Unknown && errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil {
		r.Err += " (redsync's own bound: 5% of the TTL per node)"
	}
	return r
}
