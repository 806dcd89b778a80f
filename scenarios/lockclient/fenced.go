package lockclient

import (
	"context"
	"strings"
	"time"

	"github.com/valkey-io/valkey-go"

	"github.com/lockcheck/lockcheck/history"
)

// fenceKey names the counter beside a lock key: lock:{k1} has fence:{k1}.
// Both hash to one slot, which MULTI needs in a cluster; a key without a
// hash tag gets the whole key as the counter's tag, which hashes alike.
func fenceKey(lockKey string) string {
	if i := strings.IndexByte(lockKey, '{'); i >= 0 {
		if j := strings.IndexByte(lockKey[i+1:], '}'); j > 0 {
			return "fence:" + lockKey[i:i+j+2]
		}
	}
	return "fence:{" + lockKey + "}"
}

// fencedAcquire takes the lock and draws the fence in one transaction:
// MULTI; SET lock token NX PX ttl; INCR fence; EXEC. No other client's
// command runs inside EXEC, so the fence is ordered with the acquire.
// EXEC replies [OK, n] when acquired and [nil, n] when not; the counter
// grows either way, which does no harm.
func fencedAcquire(ctx context.Context, c valkey.CommandClient, key, token string, ttl time.Duration) Result {
	resps := c.DoMulti(ctx,
		c.B().Multi().Build(),
		c.B().Arbitrary("SET").Keys(key).Args(token, "NX", "PX", ms(ttl)).Build(),
		c.B().Arbitrary("INCR").Keys(fenceKey(key)).Build(),
		c.B().Exec().Build(),
	)
	exec, err := resps[3].ToArray()
	if err != nil {
		return resultOf(ctx, err)
	}
	if len(exec) != 2 {
		return failed("EXEC replied " + resps[3].String())
	}
	if err := exec[0].Error(); err != nil {
		return resultOf(ctx, err)
	}
	fence, err := exec[1].AsInt64()
	if err != nil {
		return resultOf(ctx, err)
	}
	return Result{Outcome: history.OK, Fence: fence, HasFence: true}
}
