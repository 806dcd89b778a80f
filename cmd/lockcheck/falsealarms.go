package main

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/lockcheck/lockcheck/harness"
	"github.com/lockcheck/lockcheck/reports"
	"github.com/lockcheck/lockcheck/topology"
)

// pythonClient is the shipped Python adapter as a client kind, with the
// path it has from the repository's root.
const pythonClient = "external:/usr/bin/python3 adapters/python/redis_py_adapter.py"

// falseAlarmsTopologies are the topologies false-alarms runs on unless
// told: the command's summary in lockcheck help says them too.
const falseAlarmsTopologies = "standalone"

// runFalseAlarms measures the correct clients in the default, adversarial
// workload: how many seeded runs fail double_holder or linearizability,
// which no correct client may fail there. A measurement for the README,
// not a test: it exits 0 when every run was made, whatever the figures.
func runFalseAlarms(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlags("false-alarms", stderr)
	var src sourceFlags
	src.register(fs)
	runs := fs.Int("runs", 20, "seeded runs per client and topology (seeds 1..runs)")
	duration := fs.Duration("duration", harness.GateScenario.Duration, "length of every run")
	ttl := fs.Duration("ttl", harness.GateScenario.TTL, "the lease")
	workers := fs.Int("workers", harness.GateScenario.Clients, "the workers of every run")
	keys := fs.Int("keys", harness.GateScenario.Keys, "the lock keys")
	parallel := fs.Int("parallel", 3, "topologies at once: a build and topology kind's clients are shared out among this many")
	clients := fs.String("clients", "native,fenced,lua,delex,python,python-lua,python-fenced,python-lock,redsync,redislock,valkeylock", "comma-separated correct clients (python: the shipped redis-py adapter; python-MODE: it in another --mode)")
	server := fs.String("server", "valkey-9.1", "server build for every client but delex")
	delexServer := fs.String("delex-server", "redis-8.6", "server build for delex, which needs DELEX")
	topos := fs.String("topologies", falseAlarmsTopologies, "comma-separated topology kinds, each started once per build")
	out := fs.String("out", filepath.Join("out", "false-alarms"), "folder for false-alarms.md, false-alarms.json and the histories of runs that raised an alarm")
	if ok, code := parse(fs, args, stderr); !ok {
		return code
	}
	if fs.NArg() > 0 {
		return fail(stderr, "unexpected argument %q: run lockcheck false-alarms -h for the flags", fs.Arg(0))
	}
	if *runs <= 0 || *duration <= 0 || *ttl <= 0 || *workers <= 0 || *keys <= 0 || *parallel <= 0 {
		return fail(stderr, "--runs %d, --duration %s, --ttl %s, --workers %d, --keys %d, --parallel %d: want positive values", *runs, *duration, *ttl, *workers, *keys, *parallel)
	}
	if err := checkSize("--workers", *workers, *keys); err != nil {
		return fail(stderr, "%v", err)
	}
	base := harness.GateScenario
	base.Duration, base.TTL, base.Clients, base.Keys = *duration, *ttl, *workers, *keys
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
		case "python-lua", "python-fenced", "python-lock":
			c = pythonClient + " --mode " + strings.TrimPrefix(c, "python-")
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
	if !settled(stderr, cases, kinds, base) {
		return 0
	}
	eng, err := topology.Connect(ctx, nil)
	if err != nil {
		return fail(stderr, "%v", err)
	}
	defer eng.Close()
	fmt.Fprintf(stderr, "false-alarms: %d client(s) × %d topologies × %d seeds of %s -> %s\n", len(cases), len(kinds), *runs, base.WithDefaults().Summary(), *out)
	m := harness.FalseAlarms{Cases: cases, Topologies: kinds, Runs: *runs, Base: &base, Parallel: *parallel, Sources: sources, Out: *out, Log: stderr}
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
