package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/lockcheck/lockcheck/scenarios/lockclient"
)

// runAdapterCheck checks an external adapter against the adapter protocol
// on a standalone server: one line per step, exit 1 at the first
// violation with what the adapter did wrong.
func runAdapterCheck(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlags("adapter-check", stderr)
	var tf topoFlags
	tf.registerStandalone(fs, "valkey-9.1")
	timeout := fs.Duration("timeout", time.Second, "the adapters' timeout_ms: how long one call may take")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: lockcheck adapter-check [flags] 'CMD' (the adapter's command line, as after external:)")
		fs.PrintDefaults()
	}
	if ok, code := parse(fs, args, stderr); !ok {
		return code
	}
	if fs.NArg() != 1 {
		return fail(stderr, "adapter-check takes one argument, the adapter's command line in quotes, e.g. '/usr/bin/python3 adapters/python/redis_py_adapter.py'")
	}
	cmd := strings.TrimPrefix(fs.Arg(0), lockclient.ExternalPrefix)
	if *timeout <= 0 {
		return fail(stderr, "--timeout %v: give a positive duration, e.g. 1s", *timeout)
	}
	eng, t, code := tf.started(ctx, stderr)
	if t == nil {
		return code
	}
	defer teardown(ctx, eng, t, stderr)
	server, err := t.Nodes[0].Client()
	if err != nil {
		return fail(stderr, "%v", err)
	}
	cfg := lockclient.ConfigFor(t)
	cfg.Timeout = *timeout
	steps := 0
	c := lockclient.Conformance{Command: cmd, Config: cfg, Server: server, Step: func(name string) {
		steps++
		fmt.Fprintf(stdout, "ok    %s\n", name)
	}}
	err = c.Run(ctx)
	var ce *lockclient.ConformanceError
	switch {
	case err == nil:
		fmt.Fprintf(stdout, "adapter-check: %s speaks the adapter protocol (%d steps on %s %s)\n", cmd, steps, t.Build.Name, t.Version)
		return 0
	case errors.As(err, &ce):
		fmt.Fprintf(stdout, "FAIL  %s: %v\n", ce.Step, ce.Err)
		return 1
	}
	return fail(stderr, "adapter-check: %v", err)
}
