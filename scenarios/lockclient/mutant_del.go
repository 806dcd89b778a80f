package lockclient

import (
	"context"

	"github.com/valkey-io/valkey-go"
)

// releaseDEL is the bug the SET page's lock pattern still invites: a plain
// DEL deletes whichever client's lock is there. After the first holder's
// TTL ran out and a second client took the lock, the first one's release
// answers 1 and frees the second one's lock.
func releaseDEL(ctx context.Context, c valkey.CommandClient, key, token string) Result {
	return oneOrZero(ctx, c.Do(ctx, c.B().Arbitrary("DEL").Keys(key).Build()))
}
