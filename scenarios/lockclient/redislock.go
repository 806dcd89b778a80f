package lockclient

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/bsm/redislock"
	goredis "github.com/redis/go-redis/v9"

	"github.com/lockcheck/lockcheck/history"
)

// redislockClient adapts github.com/bsm/redislock (go-redis v9, Lua for
// obtain, refresh and release). The token is the value the library stores
// (Lock.Token); the library's *Lock is kept per acquisition because only it
// can refresh or release.
type redislockClient struct {
	name string
	cfg  Config
	rdb  goredis.UniversalClient
	lk   *redislock.Client

	mu    sync.Mutex
	locks map[string]*redislock.Lock
}

func newRedislock(name string, cfg Config) (Client, error) {
	rdb := newGoRedis(cfg)
	return &redislockClient{name: name, cfg: cfg, rdb: rdb, lk: redislock.New(rdb), locks: map[string]*redislock.Lock{}}, nil
}

func (c *redislockClient) Name() string { return c.name }

func (c *redislockClient) Close() error { return c.rdb.Close() }

func (c *redislockClient) Acquire(ctx context.Context, key string, ttl time.Duration) Result {
	ctx, cancel := WithTimeout(ctx, c.cfg.Timeout)
	defer cancel()
	// the token is drawn here, so that an acquire with no reply in time,
	// which may hold the lock, names it
	token := newToken()
	l, err := c.lk.Obtain(ctx, key, ttl, &redislock.Options{Token: token})
	if errors.Is(err, redislock.ErrNotObtained) {
		return failed("")
	}
	if err != nil {
		r := resultOf(ctx, err)
		r.Token = token
		return r
	}
	c.mu.Lock()
	c.locks[key+"\x00"+l.Token()] = l
	c.mu.Unlock()
	return Result{Outcome: history.OK, Token: l.Token()}
}

func (c *redislockClient) lock(key, token string, forget bool) *redislock.Lock {
	c.mu.Lock()
	defer c.mu.Unlock()
	l := c.locks[key+"\x00"+token]
	if forget {
		delete(c.locks, key+"\x00"+token)
	}
	return l
}

func (c *redislockClient) Extend(ctx context.Context, key, token string, ttl time.Duration) Result {
	l := c.lock(key, token, false)
	if l == nil {
		return failed("redislock: no acquisition with this token in this client")
	}
	ctx, cancel := WithTimeout(ctx, c.cfg.Timeout)
	defer cancel()
	err := l.Refresh(ctx, ttl, nil)
	if errors.Is(err, redislock.ErrNotObtained) {
		return failed("")
	}
	return resultOf(ctx, err)
}

func (c *redislockClient) Release(ctx context.Context, key, token string) Result {
	l := c.lock(key, token, true)
	if l == nil {
		return failed("redislock: no acquisition with this token in this client")
	}
	ctx, cancel := WithTimeout(ctx, c.cfg.Timeout)
	defer cancel()
	err := l.Release(ctx)
	if errors.Is(err, redislock.ErrLockNotHeld) {
		return failed("")
	}
	return resultOf(ctx, err)
}
