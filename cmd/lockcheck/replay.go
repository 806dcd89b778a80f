package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/lockcheck/lockcheck/harness"
	"github.com/lockcheck/lockcheck/reports"
	"github.com/lockcheck/lockcheck/scenarios"
	"github.com/lockcheck/lockcheck/scenarios/fault"
	"github.com/lockcheck/lockcheck/topology"
)

// runReplay runs a run folder's scenario again, from its scenario.json
// alone, into a new folder, and says whether the fault schedule came out
// as planned the first time.
func runReplay(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlags("replay", stderr)
	out := fs.String("out", "", "folder for the replay's files (default DIR-replay-<time>; with --count, one subfolder per replay)")
	force := fs.Bool("force", false, "when --out holds a run already: replace that run's files (its result and reports would be stale)")
	count := fs.Int("count", 1, "replay N times as a known-bad target: each replay must reach the run's verdict with the same kinds of failing findings; exit 0 when all did, 1 when one did not")
	var sf sourceFlags
	sf.register(fs)
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: lockcheck replay [flags] DIR\n\nRuns DIR/scenario.json again (same builds, topology, client, workload, seed and fault schedule) into a new folder. Exit codes as for lockcheck run; with --count N, 0 when every replay reproduced DIR's verdict and failing finding kinds, 1 when one did not.")
		fs.PrintDefaults()
	}
	if ok, code := parse(fs, args, stderr); !ok {
		return code
	}
	if fs.NArg() != 1 {
		return fail(stderr, "replay wants one run folder, got %d arguments: lockcheck replay DIR", fs.NArg())
	}
	if *count < 1 {
		return fail(stderr, "--count %d: want at least 1", *count)
	}
	dir, into := fs.Arg(0), *out
	if into == "" {
		into = fmt.Sprintf("%s-replay-%s", filepath.Clean(dir), time.Now().Format("20060102-150405"))
	}
	if !settled(stderr, into) {
		return 0
	}
	if err := runFolder(dir, "a folder lockcheck run or matrix wrote"); err != nil {
		return fail(stderr, "%v", err)
	}
	if _, err := os.Lstat(filepath.Join(dir, scenarios.TraceFileName)); err == nil {
		return replayTrace(ctx, dir, sf, into, *count, *force, stdout, stderr)
	}
	f, err := scenarios.LoadRunFile(filepath.Join(dir, scenarios.RunFileName))
	if errors.Is(err, os.ErrNotExist) {
		return fail(stderr, "%v: give a folder lockcheck run or matrix wrote", err)
	}
	if err != nil {
		return fail(stderr, "%v", err)
	}
	s, err := f.Scenario.Resolve()
	if err != nil {
		return fail(stderr, "%s: %v", filepath.Join(dir, scenarios.RunFileName), err)
	}
	schedule, err := s.Schedule()
	if err != nil {
		return fail(stderr, "%v", err)
	}
	if !slices.Equal(schedule, f.Schedule) {
		return fail(stderr, "%s plans faults %s but this lockcheck draws %s from its seed: replay it with the lockcheck that wrote it",
			filepath.Join(dir, scenarios.RunFileName), events(f.Schedule), events(schedule))
	}
	src, err := sf.sources()
	if err != nil {
		return fail(stderr, "%v", err)
	}
	for _, b := range s.Builds() {
		if _, err := src.Lookup(b); err != nil {
			return fail(stderr, "%s: %v", filepath.Join(dir, scenarios.RunFileName), err)
		}
	}
	if err := claimReplayOut(into, *count, *force); err != nil {
		return fail(stderr, "%v", err)
	}
	fmt.Fprintf(stderr, "replay %s: fault schedule as planned: %s\n", dir, events(schedule))
	if *count == 1 {
		return execute(ctx, s, src, into, gate{}, stdout, stderr)
	}
	return replayTarget(ctx, dir, into, *count, *force, stdout, stderr, func(ctx context.Context, eng *topology.Engine, out string) (*harness.Outcome, error) {
		return harness.Execute(ctx, eng, s, harness.Options{Out: out, Sources: src, Log: io.Discard})
	})
}

// replayTrace plays DIR/trace.json (a shrink's reproducer in script form)
// again, once or count times.
func replayTrace(ctx context.Context, dir string, sf sourceFlags, out string, count int, force bool, stdout, stderr io.Writer) int {
	tr, err := scenarios.LoadTrace(filepath.Join(dir, scenarios.TraceFileName))
	if err != nil {
		return fail(stderr, "%v", err)
	}
	src, err := sf.sources()
	if err != nil {
		return fail(stderr, "%v", err)
	}
	if _, err := src.Lookup(tr.Scenario.Server); err != nil {
		return fail(stderr, "%v", err)
	}
	if err := claimReplayOut(out, count, force); err != nil {
		return fail(stderr, "%v", err)
	}
	fmt.Fprintf(stderr, "replay %s: a script of %d steps on %s %s:\n  %s\n", dir, len(tr.Steps), tr.Scenario.Server, tr.Scenario.Topology, strings.Join(tr.Describe(), "\n  "))
	play := func(ctx context.Context, eng *topology.Engine, out string) (*harness.Outcome, error) {
		return harness.ExecuteTrace(ctx, eng, tr, harness.Options{Out: out, Sources: src, Log: io.Discard})
	}
	if count > 1 {
		return replayTarget(ctx, dir, out, count, force, stdout, stderr, play)
	}
	eng, err := topology.Connect(ctx, nil)
	if err != nil {
		return fail(stderr, "%v", err)
	}
	defer eng.Close()
	o, err := play(ctx, eng, out)
	if err != nil {
		return fail(stderr, "%v", err)
	}
	if o.Interrupted {
		return fail(stderr, "replay interrupted: nothing was checked")
	}
	reports.WriteVerdict(stdout, o.Result, out)
	return gate{}.exitCode(o.Check, o.History.Meta.Fenced, stdout)
}

// replayTarget replays the run in dir count times with play, each into a
// subfolder of out, and says how many reproduced its result.json: the
// same verdict and the same kinds of failing findings. A case kept as a
// known-bad target (a regression case) must reproduce every time.
func replayTarget(ctx context.Context, dir, out string, count int, force bool, stdout, stderr io.Writer, play func(context.Context, *topology.Engine, string) (*harness.Outcome, error)) int {
	want, err := reports.LoadRunResult(filepath.Join(dir, "result.json"))
	if err != nil {
		return fail(stderr, "%v: --count compares each replay with the run's result.json", err)
	}
	// the first replay's folder before the engine; each next one before
	// its replay
	if err := harness.ClaimOut(filepath.Join(out, "1"), force); err != nil {
		return fail(stderr, "%v", err)
	}
	eng, err := topology.Connect(ctx, nil)
	if err != nil {
		return fail(stderr, "%v", err)
	}
	defer eng.Close()
	wantKinds := want.Checks.FailingKinds()
	fmt.Fprintf(stderr, "replay %d times, each must reach %s with %s\n", count, want.Verdict, orNone(wantKinds))
	same := 0
	for i := 1; i <= count; i++ {
		if err := harness.ClaimOut(filepath.Join(out, fmt.Sprint(i)), force); err != nil {
			return fail(stderr, "replay %d: %v", i, err)
		}
		o, err := play(ctx, eng, filepath.Join(out, fmt.Sprint(i)))
		if err != nil {
			return fail(stderr, "replay %d: %v", i, err)
		}
		if o.Interrupted {
			return fail(stderr, "replay %d interrupted: %d of %d reproduced so far", i, same, i-1)
		}
		got := o.Check.Checks.FailingKinds()
		ok := o.Check.Verdict == want.Verdict && slices.Equal(got, wantKinds)
		if ok {
			same++
		}
		fmt.Fprintf(stdout, "[%d/%d] %s with %s: %s\n", i, count, o.Check.Verdict, orNone(got), map[bool]string{true: "reproduced", false: "NOT reproduced"}[ok])
	}
	fmt.Fprintf(stdout, "reproduced %d of %d\n", same, count)
	if same < count {
		return 1
	}
	return 0
}

// events lists a schedule in one line.
func events(evs []fault.Event) string {
	if len(evs) == 0 {
		return "none"
	}
	var parts []string
	for _, e := range evs {
		parts = append(parts, fmt.Sprintf("%s at %s on %s", e.Fault, e.At.Round(time.Millisecond), e.Key))
	}
	return strings.Join(parts, ", ")
}
