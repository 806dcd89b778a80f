package lockclient

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/go-redsync/redsync/v4"
	"github.com/go-redsync/redsync/v4/redis/valkeygo"
	"github.com/valkey-io/valkey-go"
	"github.com/valkey-io/valkey-go/valkeycompat"

	"github.com/lockcheck/lockcheck/history"
)

// redsyncClient adapts github.com/go-redsync/redsync/v4 with its valkey-go
// pool (one pool: a single-instance lock, not Redlock). The token is the
// value redsync stores (Mutex.Value); extend and release rebuild the mutex
// from it with WithValue, so no state is kept per acquisition.
type redsyncClient struct {
	name string
	cfg  Config
	vk   valkey.Client
	rs   *redsync.Redsync
}

func newRedsync(name string, cfg Config) (Client, error) {
	vk, err := valkey.NewClient(cfg.Option)
	if err != nil {
		return nil, fmt.Errorf("client %s: connect: %w", name, err)
	}
	rs := redsync.New(valkeygo.NewPool(valkeycompat.NewAdapter(vk)))
	return &redsyncClient{name: name, cfg: cfg, vk: vk, rs: rs}, nil
}

func (c *redsyncClient) Name() string { return c.name }

func (c *redsyncClient) Close() error { c.vk.Close(); return nil }

func (c *redsyncClient) Acquire(ctx context.Context, key string, ttl time.Duration) Result {
	ctx, cancel := WithTimeout(ctx, c.cfg.Timeout)
	defer cancel()
	m := c.rs.NewMutex(key, redsync.WithExpiry(ttl), redsync.WithTries(1))
	if err := m.TryLockContext(ctx); err != nil {
		return redsyncResult(ctx, err)
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
