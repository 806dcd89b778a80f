package harness

import (
	"context"
	"fmt"
	"io"
	"sync/atomic"
	"time"

	"github.com/lockcheck/lockcheck/checker"
	"github.com/lockcheck/lockcheck/history"
)

// progressLine prints elapsed time, operations, faults injected and the
// violations found so far, once a second, on one line. It returns the
// function that stops it.
func progressLine(ctx context.Context, w io.Writer, rec *history.Recorder, injected *atomic.Int64) func() {
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
			// The interval checks are cheap, but not free on a long
			// history: every 5 s is enough for a live count.
			if time.Since(lastCheck) >= 5*time.Second {
				violations, lastCheck = quickViolations(ctx, rec), time.Now()
			}
			fmt.Fprintf(w, "\r%6.0fs  ops %-8d faults %-3d violations so far %d   ", time.Since(rec.Started()).Seconds(), rec.Len(), injected.Load(), violations)
		}
	}()
	return func() { close(done); <-stopped }
}

// quickViolations runs the interval checks (no linearizability search) on
// the history so far.
func quickViolations(ctx context.Context, rec *history.Recorder) int {
	h := rec.History(history.Meta{})
	res, err := checker.Run(ctx, h, checker.Options{Skip: []string{checker.Linearizability}})
	if err != nil {
		return 0
	}
	n := 0
	for _, c := range res.Checks {
		if c.Name == checker.DoubleHolder || c.Name == checker.Fence || c.Name == checker.Resource {
			n += c.Count
		}
	}
	return n
}
