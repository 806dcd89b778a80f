// Package pace is how the workload, the faults and the scripts wait: on a
// condition of the topology's state, or for a planned time, both ending
// early when the run ends.
package pace

import (
	"context"
	"errors"
	"time"
)

// ErrLimit is what Poll returns when its condition never held in time.
var ErrLimit = errors.New("limit passed")

// Poll checks cond at once and then every interval until it holds, ctx
// ends or limit passes: nil when it held, ctx's error, or ErrLimit. Faults
// and scripts wait on the topology's state with it, never on a guess at
// how long a step takes.
func Poll(ctx context.Context, limit, interval time.Duration, cond func() bool) error {
	deadline := time.Now().Add(limit)
	for {
		if cond() {
			return nil
		}
		if !time.Now().Before(deadline) {
			return ErrLimit
		}
		if !Sleep(ctx, interval) {
			return ctx.Err()
		}
	}
}

// Sleep waits for d or until ctx ends, and reports whether it waited the
// whole time.
func Sleep(ctx context.Context, d time.Duration) bool { return SleepOr(ctx, d, nil) }

// Hold is Sleep for faults, which want the reason they stopped early as an
// error.
func Hold(ctx context.Context, d time.Duration) error {
	if !Sleep(ctx, d) {
		return ctx.Err()
	}
	return nil
}

// SleepOr is Sleep that also ends, early, when wake closes (a nil wake
// never does). It reports whether the run goes on: false only when ctx
// ended.
func SleepOr(ctx context.Context, d time.Duration, wake <-chan struct{}) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-wake:
		return ctx.Err() == nil
	case <-ctx.Done():
		return false
	}
}
