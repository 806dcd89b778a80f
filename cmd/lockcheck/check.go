package main

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"time"

	"github.com/lockcheck/lockcheck/checker"
	"github.com/lockcheck/lockcheck/harness"
	"github.com/lockcheck/lockcheck/history"
	"github.com/lockcheck/lockcheck/reports"
)

// runCheck re-checks a run folder offline: it reads DIR/history.json (or,
// from a run killed before it wrote one, DIR/ops.jsonl, the operations it
// streamed), runs every check again and rewrites DIR/result.json,
// DIR/junit.xml, DIR/report.html and DIR/linearizability.html. The exit
// code is the verdict's, as for lockcheck run; a partial history that is
// not violated exits as an interrupted run does.
func runCheck(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlags("check", stderr)
	tolerance := optionalDuration(fs, "tolerance", fmt.Sprintf("how far a server's lease may end before call + TTL on the harness clock, a `duration` (default: the run's, from DIR/scenario.json; %s without one)", checker.DefaultClockTolerance))
	timeout := fs.Duration("timeout", checker.DefaultTimeout, "time porcupine may search in all; past it linearizability is unknown (exit 3), never a pass (0: the default)")
	doubles := fs.String("double-holders", "auto", "auto (allowed for fenced clients, as lockcheck run), allow or forbid")
	loss := fs.String("loss", string(checker.LossDuringFaults), "when a key may lose its state: faults (in fault windows), never, anytime")
	grace := fs.Duration("fault-grace", checker.DefaultFaultGrace, "how long after a fault window a key may still be lost (a failover takes seconds)")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: lockcheck check [flags] DIR|FILE\n\nRe-checks DIR/history.json with the run's own settings (DIR/scenario.json) and rewrites the run's result.json, junit.xml, report.html and linearizability.html. A flag given overrides the run's setting. FILE, a history.json anywhere, is checked the same way, its reports written beside it.")
		fs.PrintDefaults()
	}
	if ok, code := parse(fs, args, stderr); !ok {
		return code
	}
	if fs.NArg() != 1 {
		return fail(stderr, "check wants one run folder or history file, got %d arguments: lockcheck check [flags] DIR|FILE", fs.NArg())
	}
	for _, d := range []struct {
		name, zero string
		v          time.Duration
	}{{"timeout", "the default, 60s", *timeout}, {"tolerance", "the run's, or 10ms", tolerance.or(0)}, {"fault-grace", "the default, 5s", *grace}} {
		if d.v < 0 {
			return fail(stderr, "--%s %s: want a duration of 0 or more (0: %s)", d.name, d.v, d.zero)
		}
	}
	switch checker.LossPolicy(*loss) {
	case checker.LossDuringFaults, checker.LossNever, checker.LossAnytime:
	default:
		return fail(stderr, "--loss %q: want faults, never or anytime", *loss)
	}
	if *doubles != "auto" && *doubles != "allow" && *doubles != "forbid" {
		return fail(stderr, "--double-holders %q: want auto, allow or forbid", *doubles)
	}
	if !settled(stderr) {
		return 0
	}
	start := time.Now()
	out, err := harness.Recheck(ctx, fs.Arg(0), func(opts *checker.Options) {
		opts.ClockTolerance = tolerance.or(opts.ClockTolerance)
		opts.Timeout, opts.Loss, opts.FaultGrace = *timeout, checker.LossPolicy(*loss), *grace
		switch *doubles {
		case "allow":
			opts.AllowDoubleHolders, opts.AllowedBecause = true, "--double-holders allow"
		case "forbid":
			opts.AllowDoubleHolders, opts.AllowedBecause = false, ""
		}
	})
	if err != nil {
		return fail(stderr, "%v", err)
	}
	h, res, rr, dir := out.History, out.Check, out.Result, out.Dir
	fmt.Fprintf(stderr, "checked %d operations in %s\n", res.Ops, time.Since(start).Round(time.Millisecond))
	reports.WriteVerdict(stdout, rr, dir)
	if h.Meta.Partial {
		fmt.Fprintf(stderr, "partial: %s holds the %d operations of a run that stopped before its end (%.1f s); the verdict covers those\n",
			filepath.Join(dir, history.StreamName), len(h.Ops), float64(h.Meta.DurationNs)/1e9)
		if res.Verdict != checker.Violated {
			return usageExit // as for an interrupted run: more operations could change it
		}
	}
	return res.Verdict.ExitCode()
}
