package main

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/lockcheck/lockcheck/harness"
	"github.com/lockcheck/lockcheck/reports"
	"github.com/lockcheck/lockcheck/scenarios"
	"github.com/lockcheck/lockcheck/topology"
)

// runCatchRate measures how often each mutant's randomized scenario
// catches it, and how often its control raises a false alarm: a
// measurement for the README, not a test. It exits 0 when every
// run was made, whatever the figures; 2 on bad input, a setup failure or
// an interrupted measurement.
func runCatchRate(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlags("catch-rate", stderr)
	var src sourceFlags
	src.register(fs)
	runs := fs.Int("runs", 20, "seeded runs per mutant and per control (seeds 1..runs)")
	server := fs.String("server", "valkey-9.1", "server build (lockcheck images lists them)")
	mutants := fs.String("mutants", "", "comma-separated mutants to measure (default all: "+strings.Join(caseNames(), ", ")+")")
	out := fs.String("out", filepath.Join("out", "catch-rate"), "folder for catch-rate.md, catch-rate.json and the histories of missed runs")
	duration := fs.Duration("duration", 0, "length of every run (default each scenario's own, 12-15 s)")
	parallel := fs.Int("parallel", 3, "mutants measured at once, each on a standalone topology of its own")
	gate := fs.Bool("gate", false, "measure the default gate: every mutant runs the default workload with only --ttl, --clients, --keys and --duration given, and is caught when the run does not meet lock-correct; no controls (lockcheck false-alarms runs the correct clients)")
	ttl := fs.Duration("ttl", harness.GateScenario.TTL, "with --gate: the lease")
	clients := fs.Int("clients", harness.GateScenario.Clients, "with --gate: the workers")
	keys := fs.Int("keys", harness.GateScenario.Keys, "with --gate: the lock keys")
	if ok, code := parse(fs, args, stderr); !ok {
		return code
	}
	if fs.NArg() > 0 {
		return fail(stderr, "unexpected argument %q: run lockcheck catch-rate -h for the flags", fs.Arg(0))
	}
	if *runs <= 0 {
		return fail(stderr, "--runs %d: want a positive number of seeds", *runs)
	}
	if *parallel <= 0 {
		return fail(stderr, "--parallel %d: want at least 1 topology", *parallel)
	}
	if *duration < 0 {
		return fail(stderr, "--duration %s: want a positive length (or 0 for each scenario's own)", *duration)
	}
	if *gate {
		if err := checkSize("--clients", *clients, *keys); err != nil {
			return fail(stderr, "%v", err)
		}
		if *ttl <= 0 {
			return fail(stderr, "--ttl %s: want a lease above 0", *ttl)
		}
	}
	cases, err := selectCases(*mutants)
	if err != nil {
		return fail(stderr, "%v", err)
	}
	sources, err := src.sources()
	if err != nil {
		return fail(stderr, "%v", err)
	}
	b, err := src.build(*server)
	if err != nil {
		return fail(stderr, "%v", err)
	}
	m := harness.CatchRate{Build: b, Sources: sources, Cases: cases, Runs: *runs, Parallel: *parallel, Duration: *duration, Out: *out, Log: stderr}
	what := "mutant and control each"
	if *gate {
		g := harness.GateScenario
		g.TTL, g.Clients, g.Keys = *ttl, *clients, *keys
		if *duration > 0 {
			g.Duration = *duration
		}
		m.Gate, what = &g, "the default gate ("+g.WithDefaults().Summary()+")"
	}
	if !settled(stderr, m) {
		return 0
	}
	eng, err := topology.Connect(ctx, nil)
	if err != nil {
		return fail(stderr, "%v", err)
	}
	defer eng.Close()
	fmt.Fprintf(stderr, "catch-rate: %d mutant(s) × %d seeds, %s, on %s standalone, %d at once -> %s\n", len(cases), *runs, what, b.Name, *parallel, *out)
	cr, err := m.Measure(ctx, eng)
	if cr != nil {
		reports.CatchRateMarkdown(stdout, cr)
		fmt.Fprintf(stderr, "catch-rate: %s written after %s\n", filepath.Join(*out, "catch-rate.md"), cr.Elapsed)
	}
	if err != nil {
		return fail(stderr, "%v", err)
	}
	if !cr.Complete {
		return fail(stderr, "catch-rate interrupted: the figures in %s are partial", *out)
	}
	return 0
}

// selectCases picks the named mutants' scenarios; "" picks all.
func selectCases(list string) ([]scenarios.MutantCase, error) {
	if strings.TrimSpace(list) == "" {
		return scenarios.MutantCases(), nil
	}
	var out []scenarios.MutantCase
	seen := map[string]bool{}
	for _, name := range strings.Split(list, ",") {
		name = strings.TrimSpace(name)
		if name == "" || seen[name] {
			continue
		}
		seen[name] = true
		c, err := scenarios.LookupMutantCase(name)
		if err != nil {
			return nil, fmt.Errorf("--mutants: %w", err)
		}
		out = append(out, c)
	}
	return out, nil
}

func caseNames() []string {
	var out []string
	for _, c := range scenarios.MutantCases() {
		out = append(out, c.Client)
	}
	return out
}
