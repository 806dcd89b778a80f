package main

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/lockcheck/lockcheck/measure/tables"
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
	var mf measurementFlags
	mf.register(fs, "seeded runs per client and topology (seeds 1..runs)", 3, "topologies at once: a build and topology kind's clients are shared out among this many")
	base := tables.GateScenario
	fs.DurationVar(&base.Duration, "duration", base.Duration, "length of every run")
	fs.DurationVar(&base.TTL, "ttl", base.TTL, "the lease")
	fs.IntVar(&base.Clients, "workers", base.Clients, "the workers of every run")
	fs.IntVar(&base.Keys, "keys", base.Keys, "the lock keys")
	// valkeylock is not among them: its stalled renewal keeps a holder's
	// context live past its key (docs/report-card.md), so its alarms in
	// this workload are that finding; the report card measures it.
	clients := fs.String("clients", "native,fenced,lua,delex,python,python-lua,python-fenced,python-lock,redsync,redislock,glide", "comma-separated correct clients (python: the shipped redis-py adapter; python-MODE: it in another --mode; valkeylock, left out for its renewal deadline, can be named)")
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
	shard, code := mf.check(stderr)
	if code != 0 {
		return code
	}
	if base.Duration <= 0 || base.TTL <= 0 || base.Clients <= 0 || base.Keys <= 0 {
		return fail(stderr, "--duration %s, --ttl %s, --workers %d, --keys %d: want positive values", base.Duration, base.TTL, base.Clients, base.Keys)
	}
	if err := checkSize("--workers", base.Clients, base.Keys); err != nil {
		return fail(stderr, "%v", err)
	}
	kinds, err := parseKinds(*topos)
	if err != nil {
		return fail(stderr, "--topologies: %v", err)
	}
	sources, err := mf.src.sources()
	if err != nil {
		return fail(stderr, "%v", err)
	}
	cases, code := alarmCases(mf.src, *clients, *server, *delexServer, stderr)
	if code != 0 {
		return code
	}
	if !settled(stderr, cases, kinds, base) {
		return 0
	}
	m := tables.FalseAlarms{Cases: cases, Topologies: kinds, Runs: *mf.runs, Base: &base, Parallel: *mf.parallel, Shard: shard, Sources: sources, Out: *out, Log: stderr}
	if code := goOn(&mf, *out, "false-alarms.json", &m.Earlier, func() error { return m.CheckEarlier() }, stderr); code != 0 {
		return code
	}
	eng, err := topology.Connect(ctx, nil)
	if err != nil {
		return fail(stderr, "%v", err)
	}
	defer eng.Close()
	fmt.Fprintf(stderr, "false-alarms: %d client(s) × %d topologies × %d seeds of %s%s -> %s\n", len(cases), len(kinds), *mf.runs, base.Outline(), shardNote(shard), *out)
	fa, err := m.Measure(ctx, eng)
	var elapsed reports.Millis
	if fa != nil {
		reports.FalseAlarmsMarkdown(stdout, fa)
		elapsed = fa.Elapsed
	}
	end := measurement{name: "false-alarms", dir: *out, file: "false-alarms.md", shard: shard}
	return end.end(stderr, fa != nil, elapsed, fa != nil && fa.Complete, err)
}

// parseKinds reads a comma-separated list of topology kinds.
func parseKinds(list string) ([]topology.Kind, error) {
	var kinds []topology.Kind
	for _, k := range strings.Split(list, ",") {
		kind, err := topology.ParseKind(strings.TrimSpace(k))
		if err != nil {
			return nil, err
		}
		kinds = append(kinds, kind)
	}
	return kinds, nil
}

// alarmCases are the correct clients named, each on its build: delex on
// delexServer, which has DELEX, the others on server; python and
// python-MODE name the shipped adapter.
func alarmCases(src sourceFlags, clients, server, delexServer string, stderr io.Writer) ([]tables.AlarmCase, int) {
	var cases []tables.AlarmCase
	for _, c := range strings.Split(clients, ",") {
		c = strings.TrimSpace(c)
		name := server
		switch c {
		case "delex":
			name = delexServer
		case "python":
			c = pythonClient
		case "python-lua", "python-fenced", "python-lock":
			c = pythonClient + " --mode " + strings.TrimPrefix(c, "python-")
		}
		if code := checkClient(c, stderr); code != 0 {
			return nil, code
		}
		b, err := src.build(name)
		if err != nil {
			return nil, fail(stderr, "%v", err)
		}
		cases = append(cases, tables.AlarmCase{Client: c, Build: b})
	}
	return cases, 0
}
