package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"sync/atomic"
	"time"
)

// childRun is how a measurement in a process of its own ended.
type childRun struct {
	Stdout []byte
	// PeakRSS is the child's largest RSS the parent saw (sampled every
	// 100 ms), bytes.
	PeakRSS int64
	// Capped says the parent stopped the child at the memory cap.
	Capped  bool
	Elapsed time.Duration
}

// runChild runs this program again with args and waits for it. Over
// capBytes of RSS (0: no cap) it is killed. On Ctrl-C it gets SIGINT, so
// that it removes what it started, and is killed 90 s later.
func runChild(ctx context.Context, capBytes int64, args ...string) (childRun, error) {
	exe, err := os.Executable()
	if err != nil {
		return childRun{}, fmt.Errorf("find own executable: %w", err)
	}
	cmd := exec.CommandContext(ctx, exe, args...)
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
	cmd.WaitDelay = 90 * time.Second
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = os.Stderr
	begin := time.Now()
	if err := cmd.Start(); err != nil {
		return childRun{}, fmt.Errorf("start child: %w", err)
	}
	var peak atomic.Int64
	var capped atomic.Bool
	done := make(chan struct{})
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		pid := strconv.Itoa(cmd.Process.Pid)
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
			}
			rss, err := statusBytes(pid, "VmRSS")
			if err != nil {
				continue
			}
			if rss > peak.Load() {
				peak.Store(rss)
			}
			if capBytes > 0 && rss > capBytes && !capped.Load() {
				capped.Store(true)
				cmd.Process.Kill()
			}
		}
	}()
	err = cmd.Wait()
	close(done)
	<-watched
	r := childRun{Stdout: out.Bytes(), PeakRSS: peak.Load(), Capped: capped.Load(), Elapsed: time.Since(begin)}
	if r.Capped {
		return r, nil
	}
	if err != nil {
		return r, fmt.Errorf("child %v: %w", args, err)
	}
	return r, nil
}
