package main

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"time"

	"github.com/lockcheck/lockcheck/harness"
	"github.com/lockcheck/lockcheck/reports"
	"github.com/lockcheck/lockcheck/topology"
)

// runShrink cuts a violated run down to a smaller scenario, then to a
// script of only the steps that matter, that still shows the violation,
// as a bug report wants it.
func runShrink(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlags("shrink", stderr)
	out := fs.String("out", "", "folder for the reproducer (default DIR-shrunk)")
	budget := fs.Duration("budget", 10*time.Minute, "time for the whole shrink, the confirmation included; Ctrl-C keeps the best found so far")
	tries := fs.Int("tries", 3, "runs in a row that must all show the violation before a cut is kept")
	confirm := fs.Int("confirm", 10, "replays of the reproducer at the end; at least 9 in 10 must show the violation")
	table := fs.Bool("table", false, "print a Markdown table of the shrinks in the DIR... given (each a folder lockcheck shrink wrote) and exit")
	kind := fs.String("kind", "", "finding kind to keep (default double_holder when the run has one, else its first failing kind)")
	var sf sourceFlags
	sf.register(fs)
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: lockcheck shrink [flags] DIR\n\nSearches for a smaller scenario than the violated run in DIR that still shows its violation: the seed's fault steps pinned, then a shorter run, fewer fault steps and earlier ones, fewer clients and keys, the workload's stalls and pauses off, each cut kept when --tries runs in a row show the same finding kind. Then the script form: only the calls and fault steps around the violation, played one after the other with their recorded delays (trace.json), each step left out or begun at once in turn. The smallest (the script when one reproduces) is replayed --confirm times. Writes a run folder (lockcheck replay works on it) with shrink.json: before and after, the reproduction rate, every cut tried, the script's steps in words. Exit 0 when a reproducer was confirmed, 1 when none was, 2 on bad input.")
		fs.PrintDefaults()
	}
	if ok, code := parse(fs, args, stderr); !ok {
		return code
	}
	if *table {
		return shrinkTable(fs.Args(), stdout, stderr)
	}
	if fs.NArg() != 1 {
		return fail(stderr, "shrink wants one violated run folder, got %d arguments: lockcheck shrink DIR", fs.NArg())
	}
	if *budget < time.Minute || *tries < 1 || *confirm < 1 {
		return fail(stderr, "--budget %s, --tries %d, --confirm %d: want at least a minute, 1 and 1", *budget, *tries, *confirm)
	}
	dir := fs.Arg(0)
	if *out == "" {
		*out = filepath.Clean(dir) + "-shrunk"
	}
	src, err := sf.sources()
	if err != nil {
		return fail(stderr, "%v", err)
	}
	eng, err := topology.Connect(ctx, nil)
	if err != nil {
		return fail(stderr, "%v", err)
	}
	defer eng.Close()
	res, err := harness.Shrink(ctx, eng, dir, harness.ShrinkOptions{Out: *out, Sources: src, Budget: *budget, Tries: *tries, Confirm: *confirm, Kind: *kind, Progress: stderr})
	if err != nil {
		return fail(stderr, "%v", err)
	}
	fmt.Fprintf(stdout, "before: %s\n", res.Before)
	if res.Command != "" {
		fmt.Fprintf(stdout, "after:  %s (%.1fx fewer operations)\n", res.After, res.Ratio())
	} else {
		fmt.Fprintln(stdout, "after:  no smaller scenario kept")
	}
	for _, line := range res.Script {
		fmt.Fprintf(stdout, "  %s\n", line)
	}
	fmt.Fprintf(stdout, "%s in %d of %d replays; search ended: %s; took %s of %s\n", res.Kind, res.Reproduced, res.Runs, res.Ended, (time.Duration(res.Seconds) * time.Second).Round(time.Second), res.Budget)
	if res.Command != "" {
		fmt.Fprintf(stdout, "reproducer: %s\n  %s\n  lockcheck replay --count 10 %s\n", *out, res.Command, *out)
	}
	if !res.Confirmed {
		fmt.Fprintln(stdout, "not confirmed: the reproducer showed the violation too rarely, or the shrink ended first")
		return 1
	}
	return 0
}

// shrinkTable prints the shrinks in dirs as one Markdown table.
func shrinkTable(dirs []string, stdout, stderr io.Writer) int {
	if len(dirs) == 0 {
		return fail(stderr, "--table wants the folders lockcheck shrink wrote: lockcheck shrink --table DIR...")
	}
	var rows []reports.Shrunk
	for _, dir := range dirs {
		var r reports.Shrunk
		if err := reports.ReadJSON(filepath.Join(dir, reports.ShrinkFileName), &r); err != nil {
			return fail(stderr, "%v: give folders lockcheck shrink wrote", err)
		}
		rows = append(rows, r)
	}
	fmt.Fprint(stdout, reports.ShrinkMarkdown(rows))
	return 0
}
