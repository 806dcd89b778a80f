package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/lockcheck/lockcheck/harness"
	"github.com/lockcheck/lockcheck/reports"
	"github.com/lockcheck/lockcheck/scenarios"
	"github.com/lockcheck/lockcheck/topology"
)

// runFlags are lockcheck run's flags.
type runFlags struct {
	topoFlags
	client   string
	faults   multiFlag
	duration time.Duration
	seed     int64
	clients  int
	keys     int
	ttl      time.Duration
	workMin  time.Duration
	workMax  time.Duration
	stalls   float64
	pauses   float64
	out      string
}

func (f *runFlags) register(fs *flag.FlagSet) {
	d := harness.Defaults
	f.topoFlags.register(fs)
	fs.StringVar(&f.client, "client", "native", "lock client: "+strings.Join(scenarios.Kinds(), ", ")+", or external:CMD")
	fs.Var(&f.faults, "fault", "fault to inject (repeatable): "+strings.Join(scenarios.FaultNames(), ", "))
	fs.DurationVar(&f.duration, "duration", d.Duration, "how long the workload runs")
	fs.Int64Var(&f.seed, "seed", 0, "seed for the workload's choices and the fault schedule (0: pick one and print it)")
	fs.IntVar(&f.clients, "clients", d.Clients, "logical clients")
	fs.IntVar(&f.keys, "keys", d.Keys, "lock keys (few keys, many clients: every lock is contended)")
	fs.DurationVar(&f.ttl, "ttl", d.TTL, "lease asked for by every acquire and extend; longer than a failover, so a lock lost with a primary is still believed held when the new primary hands it out")
	fs.DurationVar(&f.workMin, "work-min", 0, "shortest work while holding (default TTL/5: longer than a failover; holds are drawn evenly on a log scale)")
	fs.DurationVar(&f.workMax, "work-max", 0, "longest work while holding (default TTL: three extend periods)")
	fs.Float64Var(&f.stalls, "stall-rate", 0, "share of holds (0..1) that stall past the TTL without extending, like a GC pause; an unfenced client's write after one is stale (see also --fault pause-client)")
	fs.Float64Var(&f.pauses, "pause-rate", 0, "share of holds (0..1) frozen past the TTL inside one lock call (between its commands, or an adapter SIGSTOPped mid-request); an unfenced client's write after one is stale")
	fs.StringVar(&f.out, "out", "", "folder for the run's files (default runs/<time>-<server>-<topology>-<client>-<seed>)")
}

func runRun(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlags("run", stderr)
	var rf runFlags
	rf.register(fs)
	if ok, code := parse(fs, args, stderr); !ok {
		return code
	}
	if fs.NArg() > 0 {
		return fail(stderr, "unexpected argument %q: run lockcheck run -h for the flags", fs.Arg(0))
	}
	run, code := rf.run(stderr)
	if code != 0 {
		return code
	}
	eng, t, code := rf.start(ctx, stderr)
	if t == nil {
		return code
	}
	defer teardown(ctx, eng, t, stderr)
	if run.Out == "" {
		run.Out = harness.DefaultOut(t, run.Client, run.Seed)
	}
	fmt.Fprintf(stderr, "run %s %s %s, faults %s, %s, seed %d -> %s\n", t.Build.Name, t.Kind, run.Client, orNone(rf.faults), run.Duration, run.Seed, run.Out)
	run.Progress = stderr
	out, err := run.Execute(ctx, t)
	if err != nil {
		return fail(stderr, "%v", err)
	}
	reports.WriteVerdict(stdout, out.Result, run.Out)
	code = out.Check.Verdict.ExitCode()
	if out.Interrupted && code != 1 {
		fmt.Fprintf(stderr, "lockcheck: run interrupted after %s: the results in %s are partial\n", time.Duration(out.History.Meta.DurationNs).Round(time.Second), run.Out)
		code = usageExit
	}
	return code
}

// run checks the flags that need no engine and makes the run from them.
func (rf *runFlags) run(stderr io.Writer) (harness.Run, int) {
	if rf.duration <= 0 || rf.clients <= 0 || rf.keys <= 0 || rf.ttl < 10*time.Millisecond {
		return harness.Run{}, fail(stderr, "--duration, --clients, --keys must be positive and --ttl at least 10ms")
	}
	if rf.stalls < 0 || rf.stalls > 1 {
		return harness.Run{}, fail(stderr, "--stall-rate %g: want a share between 0 and 1", rf.stalls)
	}
	if rf.pauses < 0 || rf.pauses > 1 {
		return harness.Run{}, fail(stderr, "--pause-rate %g: want a share between 0 and 1", rf.pauses)
	}
	if code := checkClient(rf.client, stderr); code != 0 {
		return harness.Run{}, code
	}
	kind, err := topology.ParseKind(rf.kind)
	if err != nil {
		return harness.Run{}, fail(stderr, "%v", err)
	}
	var faults []scenarios.Fault
	for _, name := range rf.faults {
		f, err := scenarios.LookupFault(name)
		if err != nil {
			return harness.Run{}, fail(stderr, "%v", err)
		}
		if !f.Available(kind) {
			return harness.Run{}, fail(stderr, "fault %s does not fit a %s topology: choose a topology with replicas (sentinel or cluster)", name, kind)
		}
		faults = append(faults, f)
	}
	run := harness.Run{Client: rf.client, Faults: faults, Duration: rf.duration, TTL: rf.ttl, WorkMin: rf.workMin, WorkMax: rf.workMax,
		Seed: rf.seed, Clients: rf.clients, Keys: rf.keys, StallRate: rf.stalls, PauseRate: rf.pauses, AOF: rf.aof, Out: rf.out}.WithDefaults()
	if run.WorkMax > 0 && run.WorkMax < run.WorkMin {
		return harness.Run{}, fail(stderr, "--work-max %s is shorter than --work-min %s", run.WorkMax, run.WorkMin)
	}
	if run.Seed == 0 {
		run.Seed = time.Now().UnixNano() % 1_000_000_000
	}
	return run, 0
}

// checkClient refuses a client kind that is neither built in nor external.
func checkClient(client string, stderr io.Writer) int {
	if !strings.HasPrefix(client, scenarios.ExternalPrefix) && !scenarios.KnownKind(client) {
		return fail(stderr, "unknown client %q: choose one of %s, or external:CMD", client, strings.Join(scenarios.Kinds(), ", "))
	}
	return 0
}

func orNone(list []string) string {
	if len(list) == 0 {
		return "none"
	}
	return strings.Join(list, "+")
}
