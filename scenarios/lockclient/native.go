package lockclient

import (
	"context"
	"time"

	"github.com/valkey-io/valkey-go"
)

// The native lock of the article: no Lua, every step checks the token on
// the server in one command.

// setNX acquires with SET key token NX PX ttl.
func setNX(ctx context.Context, c valkey.CommandClient, key, token string, ttl time.Duration) Result {
	return okOrNil(ctx, c.Do(ctx, c.B().Arbitrary("SET").Keys(key).Args(token, "NX", "PX", ms(ttl)).Build()))
}

// extendIFEQ extends with SET key token IFEQ token PX ttl (8.1+). A missing
// key answers nil and is not created, so a lost lock stays lost.
func extendIFEQ(ctx context.Context, c valkey.CommandClient, key, token string, ttl time.Duration) Result {
	return okOrNil(ctx, c.Do(ctx, c.B().Arbitrary("SET").Keys(key).Args(token, "IFEQ", token, "PX", ms(ttl)).Build()))
}

// releaseDELIFEQ releases with DELIFEQ key token (9.0+).
func releaseDELIFEQ(ctx context.Context, c valkey.CommandClient, key, token string) Result {
	return oneOrZero(ctx, c.Do(ctx, c.B().Arbitrary("DELIFEQ").Keys(key).Args(token).Build()))
}
