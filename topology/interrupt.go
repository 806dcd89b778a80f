package topology

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"
)

// RemoveOnInterrupt makes SIGINT and SIGTERM remove every run this engine
// started before the process ends of the signal. A test binary needs it:
// Ryuk, testcontainers-go's reaper, is off (no registry here serves its
// image), and a Go test process that gets Ctrl-C dies at once, before any
// t.Cleanup or deferred Terminate runs, leaving its containers up.
// Commands do not call it: they cancel their context on the signal and
// tear down on their normal path. Ginkgo suites neither: Ginkgo runs
// their cleanup on an interrupt. The func it returns stops watching this
// engine (the engine is closing, its runs removed).
func (e *Engine) RemoveOnInterrupt() (stop func()) {
	reaper.Lock()
	defer reaper.Unlock()
	if reaper.engines == nil {
		reaper.engines = map[*Engine]bool{}
		sig := make(chan os.Signal, 1)
		signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
		go func() { reap(<-sig) }()
	}
	reaper.engines[e] = true
	var once sync.Once
	return func() {
		once.Do(func() {
			reaper.Lock()
			delete(reaper.engines, e)
			reaper.Unlock()
		})
	}
}

// reaper is the process's one signal watcher and the engines it reaps
// for: several test environments in one binary share it, so that the
// first to finish removing cannot end the process before the others.
var reaper struct {
	sync.Mutex
	engines map[*Engine]bool
}

// reap removes what every watched engine started, twice (a topology that
// was starting may have created a container after the first pass listed
// them), then ends the process by the signal it got, or with code 130
// where that signal is ignored (a background job's SIGINT).
func reap(s os.Signal) {
	reaper.Lock()
	defer reaper.Unlock()
	fmt.Fprintf(os.Stderr, "lockcheck: %v: removing the containers and networks this process started\n", s)
	ctx, cancel := context.WithTimeout(context.Background(), 45*time.Second)
	var errs []error
	for e := range reaper.engines {
		err := e.RemoveStarted(ctx)
		if err == nil {
			err = e.RemoveStarted(ctx)
		}
		errs = append(errs, err)
	}
	cancel()
	if err := errors.Join(errs...); err != nil {
		fmt.Fprintf(os.Stderr, "lockcheck: %v: not everything was removed (make clean removes the rest): %v\n", s, err)
	}
	signal.Reset(s)
	if n, ok := s.(syscall.Signal); ok {
		syscall.Kill(os.Getpid(), n)
		time.Sleep(100 * time.Millisecond)
	}
	os.Exit(130)
}
