package reports

import (
	"context"
	"fmt"
	"io"
	"sync/atomic"
	"time"

	"github.com/lockcheck/lockcheck/checker"
	"github.com/lockcheck/lockcheck/history"
)

// ProgressLine prints elapsed time, operations, faults injected and the
// violations a live count (of a run of ttl's leases, fenced or not) found
// so far, once a second, on one line to w (nothing when w is nil). It
// returns the function that stops it.
func ProgressLine(ctx context.Context, w io.Writer, rec *history.Recorder, injected *atomic.Int64, ttl time.Duration, fenced bool) func() {
	if w == nil {
		return func() {}
	}
	live := checker.NewLiveCount(rec, ttl, fenced)
	done := make(chan struct{})
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		violations, lastCheck := 0, time.Now()
		for {
			select {
			case <-done:
				fmt.Fprintln(w)
				return
			case <-ctx.Done():
				fmt.Fprintln(w)
				return
			case <-tick.C:
			}
			live.Pull() // every second: the recorder keeps only its latest operations
			if time.Since(lastCheck) >= 5*time.Second {
				violations, lastCheck = live.Update(ctx), time.Now()
			}
			fmt.Fprintf(w, "\r%6.0fs  ops %-8d faults %-3d violations so far %d   ", time.Since(rec.Started()).Seconds(), rec.Len(), injected.Load(), violations)
		}
	}()
	return func() { close(done); <-stopped }
}
