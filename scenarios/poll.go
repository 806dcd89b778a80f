package scenarios

import (
	"context"
	"errors"
	"time"
)

// errLimit is what poll returns when its condition never held in time.
var errLimit = errors.New("limit passed")

// poll checks cond at once and then every interval until it holds, ctx
// ends or limit passes: nil when it held, ctx's error, or errLimit. Faults
// and scripts wait on the topology's state with it, never on a guess at
// how long a step takes.
func poll(ctx context.Context, limit, interval time.Duration, cond func() bool) error {
	deadline := time.Now().Add(limit)
	for {
		if cond() {
			return nil
		}
		if !time.Now().Before(deadline) {
			return errLimit
		}
		if !sleep(ctx, interval) {
			return ctx.Err()
		}
	}
}
