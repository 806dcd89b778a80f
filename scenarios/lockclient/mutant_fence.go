package lockclient

import (
	"context"
	"math/rand/v2"
	"time"

	"github.com/valkey-io/valkey-go"

	"github.com/lockcheck/lockcheck/history"
)

// fenceOutside draws the fence with an INCR after the SET instead of inside
// one MULTI. A client that pauses between the two (gap stands in for the
// pause; with random, half the acquisitions pause for gap and half do not:
// uneven pauses are what reorder fences in a running workload) can lose the lock
// meanwhile and still draw a bigger fence than the client that took over,
// so the resource accepts the stale holder. A planned pause and cfg.MidOp
// (pauseInside) come after the gap.
func fenceOutside(cfg Config) acquireStep {
	gap, random := cfg.FenceGap, cfg.FenceGapRandom
	return func(ctx context.Context, c valkey.CommandClient, key, token string, ttl time.Duration) Result {
		r := setNX(ctx, c, key, token, ttl)
		if r.Outcome != history.OK {
			return r
		}
		if gap > 0 {
			pause := gap
			if random && rand.IntN(2) == 0 {
				pause = 0
			}
			select {
			case <-time.After(pause):
			case <-ctx.Done():
			}
		}
		// The pause may have used up the call's deadline; the INCR gets its
		// own, as a client that woke up would.
		ictx, cancel := pauseInside(ctx, cfg, key)
		defer cancel()
		fence, err := c.Do(ictx, c.B().Arbitrary("INCR").Keys(fenceKey(key)).Build()).AsInt64()
		if err != nil {
			return resultOf(ictx, err)
		}
		return Result{Outcome: history.OK, Fence: fence, HasFence: true}
	}
}
