package lockclient

import (
	"context"
	"time"

	"github.com/valkey-io/valkey-go"

	"github.com/lockcheck/lockcheck/history"
)

// extendNoPX forgets PX: a successful SET discards the key's TTL, so the
// lock never expires (PTTL -1) and a holder that dies leaves it forever.
func extendNoPX(ctx context.Context, c valkey.CommandClient, key, token string, ttl time.Duration) Result {
	return okOrNil(ctx, c.Do(ctx, c.B().Arbitrary("SET").Keys(key).Args(token, "IFEQ", token).Build()))
}

// extendKeepTTL uses KEEPTTL: the SET succeeds but keeps the old deadline,
// so the client believes in a lease the server never granted.
func extendKeepTTL(ctx context.Context, c valkey.CommandClient, key, token string, ttl time.Duration) Result {
	return okOrNil(ctx, c.Do(ctx, c.B().Arbitrary("SET").Keys(key).Args(token, "IFEQ", token, "KEEPTTL").Build()))
}

// extendBlind moves the deadline with PEXPIRE and never looks at the
// value: after its lease ended and another client took the key, the
// extend succeeds on the other client's lock (and lengthens it).
func extendBlind(ctx context.Context, c valkey.CommandClient, key, token string, ttl time.Duration) Result {
	return oneOrZero(ctx, c.Do(ctx, c.B().Pexpire().Key(key).Milliseconds(ttl.Milliseconds()).Build()))
}

// ignoreReply reports every extend that the server answered as done: a
// nil from SET IFEQ (the key is gone or someone else's) reads as success,
// so the client goes on believing it holds a lock it lost.
func ignoreReply(extend extendStep) extendStep {
	return func(ctx context.Context, c valkey.CommandClient, key, token string, ttl time.Duration) Result {
		r := extend(ctx, c, key, token, ttl)
		if r.Outcome == history.Fail && r.Err == "" {
			return okResult()
		}
		return r
	}
}

// extendOverwrite extends by writing the lock again, SET key token PX,
// without comparing: it always succeeds, and after the lease ended it takes
// the key from whoever holds it now.
func extendOverwrite(ctx context.Context, c valkey.CommandClient, key, token string, ttl time.Duration) Result {
	return okOrNil(ctx, c.Do(ctx, c.B().Arbitrary("SET").Keys(key).Args(token, "PX", ms(ttl)).Build()))
}
