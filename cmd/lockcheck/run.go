package main

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/lockcheck/lockcheck/checker"
	"github.com/lockcheck/lockcheck/harness"
	"github.com/lockcheck/lockcheck/reports"
	"github.com/lockcheck/lockcheck/scenarios"
	"github.com/lockcheck/lockcheck/topology"
)

func runRun(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlags("run", stderr)
	var sf scenarioFlags
	sf.register(fs)
	out := fs.String("out", "", "folder for the run's files (default runs/<time>-<server>-<topology>-<client>-<seed>)")
	force := fs.Bool("force", false, "when the output folder holds a run already: replace that run's files (its result and reports would be stale)")
	stop := fs.Bool("stop-on-violation", false, "end the run (its check and files) once the live check finds a violation the client's options do not allow")
	repeat := optionalInt(fs, "repeat", "run the scenario `N` times with seeds seed, seed+1, ..., each into OUT/seed-S (default 1; with --until-violation, 100)")
	until := fs.Bool("until-violation", false, "stop at the first run that is violated (or misses --expect) and say how many runs it took; up to --repeat runs")
	expect := fs.String("expect", "", "the gate the exit code follows: lock-correct (the default: never two holders, every reply one the server could give, no key without expiry, no refused command; an unfenced client's stale writes after a stall are allowed), safe (every check passes: a quiet scenario) or fence-holds (two holders allowed, the fence stops the stale one)")
	if ok, code := parse(fs, args, stderr); !ok {
		return code
	}
	e, code := parseExpect(*expect, stderr)
	if code != 0 {
		return code
	}
	if fs.NArg() > 0 {
		return fail(stderr, "unexpected argument %q: run lockcheck run -h for the flags", fs.Arg(0))
	}
	s, err := sf.scenario()
	if err != nil {
		return fail(stderr, "%v", err)
	}
	src, err := sf.sources()
	if err != nil {
		return fail(stderr, "%v", err)
	}
	runs := repeat.or(1)
	if *until {
		runs = repeat.or(100)
	}
	if runs < 1 {
		return fail(stderr, "--repeat %d: give a number of runs of 1 or more", runs)
	}
	if !settled(stderr, s) {
		return 0
	}
	if runs == 1 {
		if err := harness.ClaimOut(*out, *force); err != nil {
			return fail(stderr, "%v", err)
		}
		return execute(ctx, s, src, *out, gate{e, *stop}, stdout, stderr)
	}
	if err := claimParent(*out); err != nil {
		return fail(stderr, "%v", err)
	}
	return repeatRuns(ctx, s, src, *out, gate{e, *stop}, runs, *until, *force, stdout, stderr)
}

// repeatRuns runs s with seeds seed, seed+1, ... the way Jepsen and etcd's
// robustness tests are looped until they fail: each run into its own
// folder, one line per run, and at the end how many runs it took.
func repeatRuns(ctx context.Context, s scenarios.Scenario, src topology.Sources, out string, g gate, n int, until, force bool, stdout, stderr io.Writer) int {
	if out == "" {
		out = strings.TrimSuffix(s.Folder(time.Now()), fmt.Sprintf("-%d", s.Seed))
	}
	first, failed := s.Seed, 0
	for i := range n {
		s.Seed = first + int64(i)
		dir := filepath.Join(out, fmt.Sprintf("seed-%d", s.Seed))
		if err := harness.ClaimOut(dir, force); err != nil {
			return fail(stderr, "%v", err)
		}
		code := execute(ctx, s, src, dir, g, stdout, stderr)
		switch code {
		case 0:
			continue
		case 1:
			failed++
			if until {
				fmt.Fprintf(stdout, "violated at run %d of up to %d (seed %d): %s\n", i+1, n, s.Seed, dir)
				return 1
			}
		default:
			fmt.Fprintf(stderr, "lockcheck: run %d (seed %d) ended with exit code %d; stopping\n", i+1, s.Seed, code)
			return code
		}
	}
	if until {
		fmt.Fprintf(stdout, "no violation in %d runs (seeds %d to %d): %s\n", n, first, s.Seed, out)
		return 0
	}
	fmt.Fprintf(stdout, "%d of %d runs violated (seeds %d to %d): %s\n", failed, n, first, s.Seed, out)
	return min(failed, 1)
}

// gate is what decides a run's exit code and when it may end early.
type gate struct {
	// expect decides the exit code: 0 met, 1 not; when not given, the
	// default expectation decides, and a run it cannot judge (a check
	// undecided) exits 3.
	expect checker.Expectation
	// stop ends a run at its first violation (--stop-on-violation).
	stop bool
}

// execute runs a scenario the way lockcheck run and replay do: one line
// to start, a live progress line, the verdict, and the verdict's exit code,
// or with an expectation, 0 or 1 by it alone.
func execute(ctx context.Context, s scenarios.Scenario, src topology.Sources, out string, g gate, stdout, stderr io.Writer) int {
	if out == "" {
		out = s.Folder(time.Now())
	}
	start := fmt.Sprintf("run %s, %s, seed %d -> %s\n", s.Name(), s.Duration, s.Seed, out)
	for _, b := range s.Builds() {
		if _, err := src.Lookup(b); err != nil {
			return fail(stderr, "%v", err)
		}
	}
	eng, err := topology.Connect(ctx, nil)
	if err != nil {
		return fail(stderr, "%v", err)
	}
	defer eng.Close()
	fmt.Fprint(stderr, start)
	o, err := harness.Execute(ctx, eng, s, harness.Options{Out: out, Sources: src, Log: stderr, Progress: stderr, StopOnViolation: g.stop})
	if err != nil {
		return fail(stderr, "%v", err)
	}
	reports.WriteVerdict(stdout, o.Result, out)
	if c := o.Result.Coverage; c != nil {
		ended := ""
		if c.Covered {
			ended = fmt.Sprintf(": goal met, ended after %s of %s (--until-covered)", time.Duration(o.History.Meta.DurationNs).Round(100*time.Millisecond), s.Duration)
		}
		fmt.Fprintf(stdout, "covered: %s%s\n", c, ended)
	}
	if o.Stopped {
		fmt.Fprintf(stderr, "lockcheck: stopped after %s at the first violation (--stop-on-violation)\n", time.Duration(o.History.Meta.DurationNs).Round(time.Second))
	}
	code := g.exitCode(o.Check, o.History.Meta.Fenced, stdout)
	if o.Interrupted && code != 1 {
		fmt.Fprintf(stderr, "lockcheck: run interrupted after %s: the results in %s are partial\n", time.Duration(o.History.Meta.DurationNs).Round(time.Second), out)
		code = usageExit
	}
	return code
}

// exitCode says what the gate makes of a result, in one line on w.
func (g gate) exitCode(r *checker.Result, fenced bool, w io.Writer) int {
	e := g.expect
	if e == "" {
		e = checker.DefaultExpectation
	}
	err := e.Meets(r, fenced)
	if err == nil {
		fmt.Fprintf(w, "gate %s: met (%s)\n", e, r.Class)
		return 0
	}
	fmt.Fprintf(w, "gate %s: NOT met: %v\n", e, err)
	if g.expect == "" && r.Class == checker.ClassUnknown {
		return checker.Undecided.ExitCode()
	}
	return 1
}

func orNone(list []string) string {
	if len(list) == 0 {
		return "none"
	}
	return strings.Join(list, "+")
}
