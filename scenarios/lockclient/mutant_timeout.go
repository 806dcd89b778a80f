package lockclient

import (
	"context"
	"time"

	"github.com/valkey-io/valkey-go"

	"github.com/lockcheck/lockcheck/history"
)

// timeoutHeld takes an acquire that got no reply (a timeout, a reset
// connection) for one that succeeded: "it probably went through". When
// the SET NX did not take effect (the key was held, or the command never
// reached the server), the client works under a lock another holds. Only
// slow or broken links (the network faults) make the moment common.
func timeoutHeld(acquire acquireStep) acquireStep {
	return func(ctx context.Context, c valkey.CommandClient, key, token string, ttl time.Duration) Result {
		r := acquire(ctx, c, key, token, ttl)
		if r.Outcome == history.Unknown {
			return okResult()
		}
		return r
	}
}
