package main

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/lockcheck/lockcheck/measure/tables"
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
	var mf measurementFlags
	mf.register(fs, "seeded runs per mutant and per control (seeds 1..runs)", 3, "mutants measured at once, each on a standalone topology of its own")
	server := fs.String("server", "valkey-9.1", "server build (lockcheck images lists them)")
	mutants := fs.String("mutants", "", "comma-separated mutants to measure (default all: "+strings.Join(caseNames(), ", ")+")")
	out := fs.String("out", filepath.Join("out", "catch-rate"), "folder for catch-rate.md, catch-rate.json and the histories of missed runs")
	duration := fs.Duration("duration", 0, "length of every run (default each scenario's own, 12-15 s)")
	gate := fs.Bool("gate", false, "measure the default gate: every mutant runs the default workload with only --ttl, --clients, --keys and --duration given, and is caught when the run does not meet lock-correct; no controls (lockcheck false-alarms runs the correct clients)")
	g := tables.GateScenario
	fs.DurationVar(&g.TTL, "ttl", g.TTL, "with --gate: the lease")
	fs.IntVar(&g.Clients, "clients", g.Clients, "with --gate: the workers")
	fs.IntVar(&g.Keys, "keys", g.Keys, "with --gate: the lock keys")
	if ok, code := parse(fs, args, stderr); !ok {
		return code
	}
	if fs.NArg() > 0 {
		return fail(stderr, "unexpected argument %q: run lockcheck catch-rate -h for the flags", fs.Arg(0))
	}
	shard, code := mf.check(stderr)
	if code != 0 {
		return code
	}
	if *duration < 0 {
		return fail(stderr, "--duration %s: want a positive length (or 0 for each scenario's own)", *duration)
	}
	if err := checkGate(*gate, g); err != nil {
		return fail(stderr, "%v", err)
	}
	cases, err := selectCases(*mutants)
	if err != nil {
		return fail(stderr, "%v", err)
	}
	sources, err := mf.src.sources()
	if err != nil {
		return fail(stderr, "%v", err)
	}
	b, err := mf.src.build(*server)
	if err != nil {
		return fail(stderr, "%v", err)
	}
	m := tables.CatchRate{Build: b, Sources: sources, Cases: cases, Runs: *mf.runs, Parallel: *mf.parallel, Shard: shard, Duration: *duration, Out: *out, Log: stderr}
	what := "mutant and control each"
	if *gate {
		if *duration > 0 {
			g.Duration = *duration
		}
		m.Gate, what = &g, "the default gate ("+g.Outline()+")"
	}
	if !settled(stderr, m) {
		return 0
	}
	if code := goOn(&mf, *out, "catch-rate.json", &m.Earlier, func() error { return m.CheckEarlier() }, stderr); code != 0 {
		return code
	}
	eng, err := topology.Connect(ctx, nil)
	if err != nil {
		return fail(stderr, "%v", err)
	}
	defer eng.Close()
	fmt.Fprintf(stderr, "catch-rate: %d mutant(s) × %d seeds, %s, on %s standalone, %d at once%s -> %s\n", len(cases), m.Runs, what, b.Name, m.Parallel, shardNote(shard), *out)
	cr, err := m.Measure(ctx, eng)
	var elapsed reports.Millis
	if cr != nil {
		reports.CatchRateMarkdown(stdout, cr)
		elapsed = cr.Elapsed
	}
	end := measurement{name: "catch-rate", dir: *out, file: "catch-rate.md", shard: shard}
	return end.end(stderr, cr != nil, elapsed, cr != nil && cr.Complete, err)
}

// checkGate checks the gate's workload when --gate measures it.
func checkGate(gate bool, g scenarios.Scenario) error {
	if !gate {
		return nil
	}
	if err := checkSize("--clients", g.Clients, g.Keys); err != nil {
		return err
	}
	if g.TTL <= 0 {
		return fmt.Errorf("--ttl %s: want a lease above 0", g.TTL)
	}
	return nil
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
