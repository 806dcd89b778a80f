package scenarios

import (
	"context"
	"time"

	"github.com/valkey-io/valkey-go"
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
