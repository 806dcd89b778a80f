package lockclient

import (
	"context"
	"time"

	"github.com/valkey-io/valkey-go"

	"github.com/lockcheck/lockcheck/history"
)

// reacquireOnNil hides a lost lock: when the extend answers nil it takes
// the lock again with the same token (SET NX PX) and reports the extend as
// done. The article says never to do this: another holder may have done
// part of the work meanwhile. The caller cannot tell, so only the history
// (an extend that succeeded after the lease had ended, another client's
// acquire in between) shows it.
func reacquireOnNil(extend extendStep) extendStep {
	return func(ctx context.Context, c valkey.CommandClient, key, token string, ttl time.Duration) Result {
		r := extend(ctx, c, key, token, ttl)
		if r.Outcome != history.Fail || r.Err != "" {
			return r
		}
		return setNX(ctx, c, key, token, ttl)
	}
}
