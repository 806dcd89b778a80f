package lockclient

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/valkey-io/valkey-go"

	"github.com/lockcheck/lockcheck/history"
)

// redlockClient is the Redlock algorithm as published: a random token set
// with SET NX PX on every one of N independent primaries, each call
// bounded by a per-node timeout short next to the TTL; the lock is held
// when a majority said OK and time is left of the lease once the time the
// acquiring took and the clocks' drift are taken off (validity = TTL -
// elapsed - (TTL/100 + 2 ms)). An acquire that fails gives back what it
// took on every node; extend and release run the compare-then-act scripts
// on every node and need a majority too. The nodes are asked at once, as
// redsync does, rather than one after another.
type redlockClient struct {
	name   string
	cfg    Config
	nodes  []valkey.Client
	quorum int
	ext    luaScript
	rel    luaScript
	bug    redlockBug
}

// redlockBug is one of Redlock's known mistakes, for the mutants.
type redlockBug struct {
	// noValidity: a majority's OK is a hold whatever time the acquiring
	// took (the validity is not reduced by it).
	noValidity bool
	// anyNode: one node's OK is a hold (no majority needed).
	anyNode bool
	// fixedToken: one value for every acquisition of every client (a host
	// name, a constant), so any holder's release or extend acts on
	// another's lock.
	fixedToken bool
}

// redlockFixedToken is the value mutant-redlock-fixed-token stores.
const redlockFixedToken = "lockcheck-redlock"

// redlockKind builds the Redlock client, with bug for a mutant.
func redlockKind(bug redlockBug) kindSpec {
	return kindSpec{needs: luaNeeds, majority: true, build: func(name string, cfg Config) (Client, error) {
		return newRedlock(name, cfg, bug)
	}}
}

func newRedlock(name string, cfg Config, bug redlockBug) (Client, error) {
	opts := cfg.Nodes
	if len(opts) == 0 {
		opts = []valkey.ClientOption{cfg.Option} // one server: Redlock of one
	}
	fallbacks := new(atomic.Int64)
	c := &redlockClient{name: name, cfg: cfg, quorum: len(opts)/2 + 1, bug: bug,
		ext: newLuaScript(luaExtendSrc, fallbacks), rel: newLuaScript(luaReleaseSrc, fallbacks)}
	for i, o := range opts {
		o.DisableRetry = true
		vk, err := valkey.NewClient(o)
		if err != nil {
			c.Close()
			return nil, fmt.Errorf("client %s: connect to node %d: %w", name, i, err)
		}
		c.nodes = append(c.nodes, vk)
	}
	return c, nil
}

func (c *redlockClient) Name() string { return c.name }

func (c *redlockClient) Close() error {
	for _, n := range c.nodes {
		n.Close()
	}
	return nil
}

// RedlockDrift is the clocks' drift Redlock takes off a lease: 1 % of the
// TTL plus 2 ms for the timers' granularity.
func RedlockDrift(ttl time.Duration) time.Duration { return ttl/100 + 2*time.Millisecond }

// nodeTimeout bounds one node's call: a tenth of the TTL (at least 20 ms,
// at most the call's own bound), so that a node that does not answer
// costs a small part of the lease.
func (c *redlockClient) nodeTimeout(ttl time.Duration) time.Duration {
	return min(max(ttl/10, 20*time.Millisecond), c.cfg.Timeout)
}

// tally is what the nodes answered to one step: how many said OK, how
// many did not answer, and the first error reply (a plain refusal has
// none), which the rejected check reads.
type tally struct {
	ok, unknown int
	reply       string
}

// onEach runs f on every node at once, each bounded by per, and counts
// the answers.
func (c *redlockClient) onEach(ctx context.Context, per time.Duration, f func(ctx context.Context, n valkey.Client) Result) tally {
	results := make([]Result, len(c.nodes))
	var wg sync.WaitGroup
	for i, n := range c.nodes {
		wg.Go(func() {
			nctx, cancel := WithTimeout(ctx, per)
			defer cancel()
			results[i] = f(nctx, n)
		})
	}
	wg.Wait()
	var t tally
	for _, r := range results {
		switch r.Outcome {
		case history.OK:
			t.ok++
		case history.Unknown:
			t.unknown++
		}
		if r.Outcome == history.Fail && r.Err != "" && t.reply == "" {
			t.reply = r.Err
		}
	}
	return t
}

// held says whether t is a hold: a majority (or, for the mutant, any
// node) said OK.
func (c *redlockClient) held(t tally) bool {
	if c.bug.anyNode {
		return t.ok > 0
	}
	return t.ok >= c.quorum
}

func (c *redlockClient) Acquire(ctx context.Context, key string, ttl time.Duration) Result {
	ctx, cancel := WithTimeout(ctx, c.cfg.Timeout)
	defer cancel()
	start := time.Now()
	token := newToken()
	if c.bug.fixedToken {
		token = redlockFixedToken
	}
	t := c.onEach(ctx, c.nodeTimeout(ttl), func(ctx context.Context, n valkey.Client) Result {
		return okOrNil(ctx, n.Do(ctx, n.B().Set().Key(key).Value(token).Nx().Px(ttl).Build()))
	})
	if c.held(t) {
		// a pause here (a GC pause, a frozen process) falls between the
		// nodes' answers and the validity check, where the check is
		// what stands between the pause and a lease already gone
		var wake context.CancelFunc
		ctx, wake = pauseInside(ctx, c.cfg, key)
		defer wake()
		validity := ttl - time.Since(start) - RedlockDrift(ttl)
		if validity > 0 || c.bug.noValidity {
			return Result{Outcome: history.OK, Token: token}
		}
		// a majority said OK, but the lease is gone: a refusal
		c.giveBack(ctx, key, token, ttl)
		return failed("")
	}
	c.giveBack(ctx, key, token, ttl)
	return failed(t.reply)
}

// giveBack releases token on every node, also those that did not answer
// OK (their SET may have landed), with a fresh deadline: the acquire's
// may be what ran out.
func (c *redlockClient) giveBack(ctx context.Context, key, token string, ttl time.Duration) {
	gctx, cancel := WithTimeout(context.WithoutCancel(ctx), c.cfg.Timeout)
	defer cancel()
	c.onEach(gctx, c.nodeTimeout(ttl), func(ctx context.Context, n valkey.Client) Result {
		return oneOrZero(ctx, c.rel.exec(ctx, n, key, token))
	})
}

func (c *redlockClient) Extend(ctx context.Context, key, token string, ttl time.Duration) Result {
	ctx, cancel := WithTimeout(ctx, c.cfg.Timeout)
	defer cancel()
	start := time.Now()
	t := c.onEach(ctx, c.nodeTimeout(ttl), func(ctx context.Context, n valkey.Client) Result {
		return oneOrZero(ctx, c.ext.exec(ctx, n, key, token, ms(ttl)))
	})
	if !c.held(t) {
		return c.short(t)
	}
	// frozen between the answers and the validity check, as an acquire is
	_, wake := pauseInside(ctx, c.cfg, key)
	defer wake()
	if validity := ttl - time.Since(start) - RedlockDrift(ttl); validity <= 0 && !c.bug.noValidity {
		return failed("") // extended, but the lease is gone
	}
	return okResult()
}

func (c *redlockClient) Release(ctx context.Context, key, token string) Result {
	ctx, cancel := WithTimeout(ctx, c.cfg.Timeout)
	defer cancel()
	t := c.onEach(ctx, c.cfg.Timeout, func(ctx context.Context, n valkey.Client) Result {
		return oneOrZero(ctx, c.rel.exec(ctx, n, key, token))
	})
	if t.ok >= c.quorum {
		return pauseAfter(ctx, okResult())
	}
	return c.short(t)
}

// short is an extend's or release's result without a majority: unknown
// when the nodes that did not answer could have made one.
func (c *redlockClient) short(t tally) Result {
	if t.ok+t.unknown >= c.quorum {
		return unknownResult(fmt.Sprintf("%d of %d nodes said OK and %d did not answer: %d needed", t.ok, len(c.nodes), t.unknown, c.quorum))
	}
	return failed(t.reply)
}
