// Command lockcheck starts real Valkey servers in containers, runs lock
// workloads against them while it injects faults, and checks the histories.
// It is a thin layer over the topology, scenarios, checker and reports
// packages.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

// usageExit is the exit code for bad input or a setup failure.
const usageExit = 2

type command struct {
	name, summary string
	run           func(ctx context.Context, args []string, stdout, stderr io.Writer) int
}

func commands() []command {
	return []command{
		{"images", "list server builds and how each image is obtained; --build builds the offline ones", runImages},
		{"probe", "start a topology, check its health and version, tear it down", runProbe},
		{"up", "start a topology and keep it up until interrupted", runUp},
		{"run", "run a lock workload with faults on a seeded schedule and check its history", runRun},
		{"upgrade", "upgrade (or roll back) a topology node by node from one build to another under a lock workload; prints the step table", runUpgrade},
		{"replay", "run a run folder's scenario again (same builds, workload, seed and fault schedule) into a new folder", runReplay},
		{"shrink", "cut a violated run down to a smaller scenario that still shows its violation, replayed to confirm it: a reproducer for a bug report", runShrink},
		{"compat", "observe every lock command on every build and topology; writes a matrix", runCompat},
		{"matrix", "run every client × fault on every build × topology; writes index.html, matrix.json, junit.xml", runMatrix},
		{"merge", "join the folders of a sharded matrix (matrix --shard I/N) into one index.html, matrix.json, junit.xml, or a sharded measurement's into its whole table", runMerge},
		{"check", "re-check a saved run folder offline", runCheck},
		{"import", "convert another tool's history (Jepsen's history.edn of a lock workload) into a folder lockcheck check reads", runImport},
		{"adapter-check", "check an external adapter against the adapter protocol on a standalone server, in seconds", runAdapterCheck},
		{"catch-rate", "run each mutant and its control over seeded runs of its randomized scenario; writes catch-rate.md", runCatchRate},
		{"claims", "run each published claim about Redlock (docs/redlock.md names its source) over seeded runs of the scenario that tests it, and each Redlock mutant; writes claims.md", runClaims},
		{"false-alarms", "run the correct clients over seeded runs of the default workload on " + falseAlarmsTopologies + " (--topologies adds others); writes false-alarms.md", runFalseAlarms},
		{"shrink-figures", "shrink each violated run given (lockcheck shrink), a few at once, shardable; writes shrink-figures.md", runShrinkFigures},
		{"docs", "write the reference pages generated from the code: every command's flags, the faults, the clients", runDocs},
	}
}

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		usage(stderr)
		if len(args) == 0 {
			return usageExit
		}
		return 0
	}
	for _, c := range commands() {
		if c.name == args[0] {
			// Ctrl-C and SIGTERM cancel the context: every command tears
			// down what it started before it returns.
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			return c.run(ctx, args[1:], stdout, stderr)
		}
	}
	fmt.Fprintf(stderr, "lockcheck: unknown command %q: run lockcheck help for the list\n", args[0])
	return usageExit
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: lockcheck COMMAND [flags]")
	fmt.Fprintln(w)
	width := 0
	for _, c := range commands() {
		width = max(width, len(c.name))
	}
	for _, c := range commands() {
		fmt.Fprintf(w, "  %-*s  %s\n", width, c.name, c.summary)
	}
	fmt.Fprintln(w, "\nlockcheck COMMAND -h shows a command's flags.")
}
