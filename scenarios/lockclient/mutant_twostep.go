package lockclient

import (
	"context"
	"time"

	"github.com/valkey-io/valkey-go"

	"github.com/lockcheck/lockcheck/history"
)

// Lock steps done in two commands where one is needed. Each is correct
// when nothing comes between its commands, which is why it survives a
// kind workload: only a pause between them (pauseInside) shows the bug.

// setNXThenExpire is the old SETNX lock pattern: SET key token NX, then
// PEXPIRE. Frozen between the two, the client leaves a lock key with no
// expiry, which nobody can take until the holder wakes, and nobody ever
// if it crashes.
func setNXThenExpire(cfg Config) acquireStep {
	return func(ctx context.Context, c valkey.CommandClient, key, token string, ttl time.Duration) Result {
		r := okOrNil(ctx, c.Do(ctx, c.B().Arbitrary("SET").Keys(key).Args(token, "NX").Build()))
		if r.Outcome != history.OK {
			return r
		}
		ictx, cancel := pauseInside(ctx, cfg, key)
		defer cancel()
		return oneOrZero(ictx, c.Do(ictx, c.B().Pexpire().Key(key).Milliseconds(ttl.Milliseconds()).Build()))
	}
}

// releaseGetThenDel compares, then acts: GET the key, and DEL it if it
// holds the token. Frozen between the two past its lease, the client
// deletes the lock the next holder took meanwhile.
func releaseGetThenDel(cfg Config) releaseStep {
	return func(ctx context.Context, c valkey.CommandClient, key, token string) Result {
		if r, ok := getCompare(ctx, c, key, token); !ok {
			return r
		}
		ictx, cancel := pauseInside(ctx, cfg, key)
		defer cancel()
		return oneOrZero(ictx, c.Do(ictx, c.B().Del().Key(key).Build()))
	}
}

// extendGetThenPexpire is the Lua-era extend script run as two commands:
// GET the key, and PEXPIRE it if it holds the token. Frozen between the
// two past its lease, the client extends the lock the next holder took
// meanwhile, and reports an extend of its own.
func extendGetThenPexpire(cfg Config) extendStep {
	return func(ctx context.Context, c valkey.CommandClient, key, token string, ttl time.Duration) Result {
		if r, ok := getCompare(ctx, c, key, token); !ok {
			return r
		}
		ictx, cancel := pauseInside(ctx, cfg, key)
		defer cancel()
		return oneOrZero(ictx, c.Do(ictx, c.B().Pexpire().Key(key).Milliseconds(ttl.Milliseconds()).Build()))
	}
}

// getCompare is the compare half of a compare-then-act step: GET key, and
// say whether it holds token. When it does not, the Result is the step's
// answer: nil or another value is a definite no, an error its outcome.
func getCompare(ctx context.Context, c valkey.CommandClient, key, token string) (Result, bool) {
	v, err := c.Do(ctx, c.B().Get().Key(key).Build()).ToString()
	switch {
	case valkey.IsValkeyNil(err):
		return failed(""), false
	case err != nil:
		return resultOf(ctx, err), false
	case v != token:
		return failed(""), false
	}
	return Result{}, true
}
