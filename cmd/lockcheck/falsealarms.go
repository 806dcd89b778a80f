package main

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/lockcheck/lockcheck/harness"
	"github.com/lockcheck/lockcheck/reports"
	"github.com/lockcheck/lockcheck/topology"
)

// pythonClient is the shipped Python adapter as a client kind, with the
// path it has from the repository's root.
const pythonClient = "external:/usr/bin/python3 adapters/python/redis_py_adapter.py"

// runFalseAlarms measures the correct clients in the default, adversarial
// workload: how many seeded runs fail double_holder or linearizability,
// which no correct client may fail there. A measurement for the README,
// not a test: it exits 0 when every run was made, whatever the figures.
func runFalseAlarms(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlags("false-alarms", stderr)
	var src sourceFlags
	src.register(fs)
	runs := fs.Int("runs", 20, "seeded runs per client and topology (seeds 1..runs)")
	duration := fs.Duration("duration", 10*time.Second, "length of every run")
	clients := fs.String("clients", "native,fenced,lua,delex,python", "comma-separated correct clients (python: the shipped redis-py adapter; python-lock: its redis-py Lock mode)")
	server := fs.String("server", "valkey-9.1", "server build for every client but delex")
	delexServer := fs.String("delex-server", "redis-8.6", "server build for delex, which needs DELEX")
	topos := fs.String("topologies", "standalone,sentinel", "comma-separated topology kinds, each started once per build")
	out := fs.String("out", filepath.Join("out", "false-alarms"), "folder for false-alarms.md, false-alarms.json and the histories of runs that raised an alarm")
	if ok, code := parse(fs, args, stderr); !ok {
		return code
	}
	if fs.NArg() > 0 {
		return fail(stderr, "unexpected argument %q: run lockcheck false-alarms -h for the flags", fs.Arg(0))
	}
	if *runs <= 0 || *duration <= 0 {
		return fail(stderr, "--runs %d, --duration %s: want a positive number of seeds and a positive length", *runs, *duration)
	}
	var kinds []topology.Kind
	for _, k := range strings.Split(*topos, ",") {
		kind, err := topology.ParseKind(strings.TrimSpace(k))
		if err != nil {
			return fail(stderr, "--topologies: %v", err)
		}
		kinds = append(kinds, kind)
	}
	sources, err := src.sources()
	if err != nil {
		return fail(stderr, "%v", err)
	}
	var cases []harness.AlarmCase
	for _, c := range strings.Split(*clients, ",") {
		c = strings.TrimSpace(c)
		name := *server
		switch c {
		case "delex":
			name = *delexServer
		case "python":
			c = pythonClient
		case "python-lock":
			c = pythonClient + " --mode lock"
		}
		if code := checkClient(c, stderr); code != 0 {
			return code
		}
		b, err := src.build(name)
		if err != nil {
			return fail(stderr, "%v", err)
		}
		cases = append(cases, harness.AlarmCase{Client: c, Build: b})
	}
	eng, err := topology.Connect(ctx, nil)
	if err != nil {
		return fail(stderr, "%v", err)
	}
	defer eng.Close()
	fmt.Fprintf(stderr, "false-alarms: %d client(s) × %d topologies × %d seeds of %s -> %s\n", len(cases), len(kinds), *runs, *duration, *out)
	m := harness.FalseAlarms{Cases: cases, Topologies: kinds, Runs: *runs, Duration: *duration, Sources: sources, Out: *out, Log: stderr}
	fa, err := m.Measure(ctx, eng)
	if fa != nil {
		reports.FalseAlarmsMarkdown(stdout, fa)
		fmt.Fprintf(stderr, "false-alarms: %s written after %s\n", filepath.Join(*out, "false-alarms.md"), fa.Elapsed)
	}
	if err != nil {
		return fail(stderr, "%v", err)
	}
	if !fa.Complete {
		return fail(stderr, "false-alarms interrupted: the figures in %s are partial", *out)
	}
	return 0
}
