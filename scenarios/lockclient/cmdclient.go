package lockclient

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/valkey-io/valkey-go"

	"github.com/lockcheck/lockcheck/history"
)

// The command-level clients differ only in how they acquire, extend and
// release; each kind is one combination of these steps (see registry.go).
type (
	acquireStep func(ctx context.Context, c valkey.CommandClient, key, token string, ttl time.Duration) Result
	extendStep  func(ctx context.Context, c valkey.CommandClient, key, token string, ttl time.Duration) Result
	releaseStep func(ctx context.Context, c valkey.CommandClient, key, token string) Result
)

// cmdClient is a lock client written against valkey-go commands: native,
// fenced, delex, lua and the mutants.
type cmdClient struct {
	name    string
	c       valkey.Client
	cfg     Config
	acquire acquireStep
	extend  extendStep
	release releaseStep
	// token draws a new acquisition's token (newToken).
	token func() string
	// counts are the client's own counters: short WAITs, and NOSCRIPT
	// fallbacks for lua. Set at construction, read concurrently.
	counts map[string]*atomic.Int64
}

// newCmdClient connects with retries off: a client that retried a write
// behind the harness's back would make a recorded outcome a guess.
func newCmdClient(name string, cfg Config, a acquireStep, e extendStep, r releaseStep) (*cmdClient, error) {
	opt := cfg.Option
	opt.DisableRetry = true
	c, err := valkey.NewClient(opt)
	if err != nil {
		return nil, fmt.Errorf("client %s: connect: %w", name, err)
	}
	counts := map[string]*atomic.Int64{"short_waits": new(atomic.Int64)}
	return &cmdClient{name: name, c: c, cfg: cfg, acquire: a, extend: e, release: r, token: newToken, counts: counts}, nil
}

func (k *cmdClient) Name() string { return k.name }

func (k *cmdClient) Close() error { k.c.Close(); return nil }

// Counts reports the client's own counters, such as NOSCRIPT fallbacks.
func (k *cmdClient) Counts() map[string]int64 {
	out := map[string]int64{}
	for name, v := range k.counts {
		out[name] = v.Load()
	}
	return out
}

// Acquire draws a new token and runs the acquire step, then WAIT or WAITAOF
// on the same connection when asked.
func (k *cmdClient) Acquire(ctx context.Context, key string, ttl time.Duration) Result {
	token := k.token()
	ctx, cancel := WithTimeout(ctx, k.cfg.Timeout+k.cfg.Wait.Timeout)
	defer cancel()
	if !k.cfg.Wait.Enabled() {
		r := k.acquire(ctx, k.c, key, token, ttl)
		r.Token = token
		return pauseAfter(ctx, r)
	}
	var r Result
	var short string
	err := k.c.Dedicated(func(d valkey.DedicatedClient) error {
		r = k.acquire(ctx, d, key, token, ttl)
		if r.Outcome == history.OK {
			short = k.cfg.Wait.wait(ctx, d)
		}
		return nil
	})
	if err != nil {
		r = resultOf(ctx, err)
	}
	r.Token = token
	if short == "" {
		return pauseAfter(ctx, r)
	}
	k.counts["short_waits"].Add(1)
	if k.cfg.Wait.OnShort != WaitRelease {
		k.cfg.Log.Info("acquired, but WAIT fell short", "client", k.name, "key", key, "wait", short)
		return r
	}
	return k.undo(ctx, key, token, r, short)
}

// undo gives back a lock whose WAIT fell short and reports the acquire as
// failed, or unknown when the release's outcome is.
func (k *cmdClient) undo(ctx context.Context, key, token string, r Result, short string) Result {
	u := &Undo{Call: k.cfg.Clock()}
	rctx, cancel := WithTimeout(context.WithoutCancel(ctx), k.cfg.Timeout)
	defer cancel()
	u.Release = k.release(rctx, k.c, key, token)
	u.Return = k.cfg.Clock()
	r.Undo = u
	r.Outcome = history.Fail
	r.Err = short + "; released"
	if u.Release.Outcome == history.Unknown {
		r.Outcome = history.Unknown
		r.Err = short + "; release unknown: " + u.Release.Err
	}
	k.cfg.Log.Info("WAIT fell short, lock given back", "client", k.name, "key", key, "wait", short, "release", u.Release.Outcome)
	return r
}

func (k *cmdClient) Extend(ctx context.Context, key, token string, ttl time.Duration) Result {
	ctx, cancel := WithTimeout(ctx, k.cfg.Timeout)
	defer cancel()
	return pauseAfter(ctx, k.extend(ctx, k.c, key, token, ttl))
}

func (k *cmdClient) Release(ctx context.Context, key, token string) Result {
	ctx, cancel := WithTimeout(ctx, k.cfg.Timeout)
	defer cancel()
	return pauseAfter(ctx, k.release(ctx, k.c, key, token))
}

// pauseAfter takes the call's planned pause, if no step took it between
// its commands, once the server has answered OK and before the caller
// hears of it: where an operation is one command, that is the only
// moment inside it. An acquire that did not take the lock leaves the
// pause to the next attempt.
func pauseAfter(ctx context.Context, r Result) Result {
	if r.Outcome != history.OK {
		return r
	}
	if p := takePause(ctx); p != nil {
		p.Sleep()
	}
	return r
}

func ms(d time.Duration) string { return fmt.Sprint(d.Milliseconds()) }

// okOrNil reads a reply that is OK when the command took effect and nil
// when it did not (SET NX, SET IFEQ).
func okOrNil(ctx context.Context, res valkey.ValkeyResult) Result {
	return resultOf(ctx, res.Error())
}

// oneOrZero reads an integer reply that is 1 when the command took effect
// (DELIFEQ, DELEX, DEL, the Lua scripts).
func oneOrZero(ctx context.Context, res valkey.ValkeyResult) Result {
	n, err := res.AsInt64()
	if err != nil {
		return resultOf(ctx, err)
	}
	if n != 1 {
		return failed("")
	}
	return okResult()
}
