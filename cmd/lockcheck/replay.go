package main

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/lockcheck/lockcheck/scenarios"
	"github.com/lockcheck/lockcheck/scenarios/fault"
)

// runReplay runs a run folder's scenario again, from its scenario.json
// alone, into a new folder, and says whether the fault schedule came out
// as planned the first time.
func runReplay(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlags("replay", stderr)
	out := fs.String("out", "", "folder for the replay's files (default DIR-replay-<time>)")
	var sf sourceFlags
	sf.register(fs)
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: lockcheck replay [flags] DIR\n\nRuns DIR/scenario.json again (same builds, topology, client, workload, seed and fault schedule) into a new folder. Exit codes as for lockcheck run.")
		fs.PrintDefaults()
	}
	if ok, code := parse(fs, args, stderr); !ok {
		return code
	}
	if fs.NArg() != 1 {
		return fail(stderr, "replay wants one run folder, got %d arguments: lockcheck replay DIR", fs.NArg())
	}
	dir := fs.Arg(0)
	f, err := scenarios.LoadRunFile(filepath.Join(dir, scenarios.RunFileName))
	if err != nil {
		return fail(stderr, "%v: give a folder lockcheck run or matrix wrote", err)
	}
	s := f.Scenario
	if err := s.Validate(); err != nil {
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
	fmt.Fprintf(stderr, "replay %s: fault schedule as planned: %s\n", dir, events(schedule))
	src, err := sf.sources()
	if err != nil {
		return fail(stderr, "%v", err)
	}
	if *out == "" {
		*out = fmt.Sprintf("%s-replay-%s", filepath.Clean(dir), time.Now().Format("20060102-150405"))
	}
	return execute(ctx, s, src, *out, gate{}, stdout, stderr)
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
