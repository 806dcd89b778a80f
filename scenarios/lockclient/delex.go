package lockclient

import (
	"context"

	"github.com/valkey-io/valkey-go"
)

// releaseDELEX releases with DELEX key IFEQ token: Valkey 9.2 (from rc2)
// and Redis 8.4+, where one code path must serve both.
func releaseDELEX(ctx context.Context, c valkey.CommandClient, key, token string) Result {
	return oneOrZero(ctx, c.Do(ctx, c.B().Arbitrary("DELEX").Keys(key).Args("IFEQ", token).Build()))
}
