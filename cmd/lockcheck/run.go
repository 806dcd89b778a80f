package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/lockcheck/lockcheck/checker"
	"github.com/lockcheck/lockcheck/harness"
	"github.com/lockcheck/lockcheck/reports"
	"github.com/lockcheck/lockcheck/scenarios"
	"github.com/lockcheck/lockcheck/scenarios/fault"
	"github.com/lockcheck/lockcheck/scenarios/lockclient"
	"github.com/lockcheck/lockcheck/topology"
)

// scenarioFlags parse the flags of a command that runs a scenario
// (lockcheck run, upgrade) into a Scenario: every setting a Scenario has
// is a flag, bound to the Scenario's field where it has one, and each
// flag's default is the one the command applies (run's are the ones
// Scenario.WithDefaults gives).
type scenarioFlags struct {
	s          scenarios.Scenario
	faults     multiFlag
	faultAt    multiFlag
	nodeBuilds multiFlag
	// shares whose default is not none: 0 on the command line says none
	stalls, pauses, late, abandon float64
	observe                       time.Duration
	wait, waitAOF                 string
	onShort                       string
	sourceFlags
	fs    *flag.FlagSet
	nodes *optional[int]
}

// mustBePositive are the flags whose 0 would mean the default.
var mustBePositive = []string{"duration", "ttl", "clients", "keys", "nodes", "work-min", "work-max", "backoff-min", "backoff-max", "write-gap", "call-timeout", "tolerance"}

// register adds lockcheck run's flags.
func (f *scenarioFlags) register(fs *flag.FlagSet) {
	f.registerWith(fs, scenarios.Scenario{}.WithDefaults(), false)
}

// upgradeDefaults are lockcheck upgrade's defaults where they differ from
// run's: Sentinel, a topology whose upgrade has a failover step; short
// leases, so that every step's state sees many holds; a duration that is
// a bound, as the run ends with the upgrade's last step.
func upgradeDefaults() scenarios.Scenario {
	return scenarios.Scenario{ServerSettings: scenarios.ServerSettings{Topology: topology.Sentinel}, TrafficSettings: scenarios.TrafficSettings{TTL: 2 * time.Second, Duration: 10 * time.Minute}}.WithDefaults()
}

// registerUpgrade adds lockcheck upgrade's flags: run's, with --from and
// --to for --server, upgrade's defaults, and none that it could only
// refuse: no fault or node-build flags (a rolling upgrade is the run's one
// fault, and starts every node on one build), no --nodes (independent
// primaries have no upgrade step).
func (f *scenarioFlags) registerUpgrade(fs *flag.FlagSet) {
	f.registerWith(fs, upgradeDefaults(), true)
}

// registerWith adds the scenario flags with d's defaults; an upgrade's
// server flags are --from and --to, and it has only the topologies an
// upgrade has steps in.
func (f *scenarioFlags) registerWith(fs *flag.FlagSet, d scenarios.Scenario, upgrade bool) {
	s := &f.s
	f.fs = fs
	if upgrade {
		fs.StringVar(&s.Server, "from", "", "the build every node starts on, e.g. valkey-8.1")
		fs.StringVar(&s.UpgradeTo, "to", "", "the build every node is moved onto, one at a time, e.g. valkey-9.1 (an older build: a rollback)")
		fs.StringVar((*string)(&s.Topology), "topology", string(d.Topology), "replicated, sentinel or cluster (a standalone server or independent primaries have no upgrade step)")
	} else {
		fs.StringVar(&s.Server, "server", "", "server build, e.g. valkey-9.1 (lockcheck images lists them)")
		fs.Var(&f.nodeBuilds, "node-build", "NODE=BUILD: run one node on another build, e.g. n1=valkey-8.1 (repeatable; a rolling upgrade half way)")
		fs.Var(&f.faults, "fault", "fault to inject (repeatable): "+strings.Join(fault.Names(), ", "))
		fs.Var(&f.faultAt, "fault-at", "FAULT@OFFSET[@KEY]: inject FAULT at OFFSET from the start, on KEY's primary (default the first key); repeatable; replaces the seed's fault schedule (lockcheck shrink writes these)")
		fs.StringVar((*string)(&s.Topology), "topology", string(d.Topology), "standalone, replicated, sentinel, cluster, or redlock (independent primaries)")
		f.nodes = optionalInt(fs, "nodes", "independent primaries of a redlock topology, a `number` (default 3)")
	}
	fs.BoolVar(&s.AOF, "aof", false, "turn on appendonly (appendfsync as --fsync says, always by default): a killed node keeps its data")
	fs.StringVar((*string)(&s.Fsync), "fsync", "", "appendfsync policy with --aof: always (default), everysec or no; what a node's power loss (crash-restart) keeps")
	fs.IntVar(&s.MinReplicas, "min-replicas-to-write", 0, "every server's min-replicas-to-write: a primary refuses writes while fewer replicas acknowledged within --min-replicas-max-lag (0: off)")
	fs.DurationVar(&s.MinReplicasMaxLag, "min-replicas-max-lag", 0, "every server's min-replicas-max-lag, whole seconds (default the server's, 10s)")
	fs.StringVar(&s.Client, "client", d.Client, "lock client: "+strings.Join(lockclient.Kinds(), ", ")+", or external:CMD")
	fs.BoolVar(&s.Fenced, "fenced", false, "the external adapter draws fences: the resource checks them")
	fs.DurationVar(&s.Duration, "duration", d.Duration, "how long the workload runs; with faults it goes on until a lease after the last fault step ended, at most as long again, and says when that bound cut it short")
	fs.BoolVar(&s.UntilCovered, "until-covered", false, "end the run once it covered its goal ("+scenarios.CoverageGoalText()+"), --duration then only its bound; what it covered is in result.json")
	fs.Int64Var(&s.Seed, "seed", 0, "seed for the workload's choices and the fault schedule (default 0: pick one and print it)")
	fs.IntVar(&s.Clients, "clients", d.Clients, "logical clients")
	fs.IntVar(&s.Keys, "keys", d.Keys, "lock keys (few keys, many clients: every lock is contended)")
	fs.DurationVar(&s.TTL, "ttl", d.TTL, "lease asked for by every acquire and extend; longer than a failover, so a lock lost with a primary is still believed held when the new primary hands it out")
	fs.DurationVar(&s.WorkMin, "work-min", 0, "shortest work while holding (default TTL/5: longer than a failover; holds are drawn evenly on a log scale)")
	fs.DurationVar(&s.WorkMax, "work-max", 0, "longest work while holding (default TTL: three extend periods)")
	fs.Float64Var(&f.stalls, "stall-rate", d.StallRate, "share of holds (0..1) that stall past the TTL without extending, like a GC pause; an unfenced client's write after one is stale (see also --fault pause-client)")
	fs.Float64Var(&f.pauses, "pause-rate", d.PauseRate, "share of holds (0..1) frozen past the TTL inside one lock call (between its commands, or an adapter SIGSTOPped mid-request); an unfenced client's write after one is stale")
	fs.Float64Var(&f.late, "late-rate", d.LateRate, "share of holds (0..1) that extend and release near the lease's end (0: none)")
	fs.Float64Var(&f.abandon, "abandon-rate", d.AbandonRate, "share of holds (0..1) left without release, as by a crashed holder (0: none)")
	fs.DurationVar(&f.observe, "observe-every", 0, "mean time between the observer's reads of a lock key (default TTL/4; negative: no observer)")
	fs.DurationVar(&s.BackoffMin, "backoff-min", d.BackoffMin, "shortest pause between acquire attempts")
	fs.DurationVar(&s.BackoffMax, "backoff-max", 0, "longest pause between acquire attempts (default TTL/4)")
	fs.DurationVar(&s.WriteGap, "write-gap", 0, "the unfenced resource's pause between read and write (default TTL/10)")
	fs.DurationVar(&s.CallTimeout, "call-timeout", d.CallTimeout, "bound on one lock call; past it the outcome is unknown")
	fs.StringVar(&f.wait, "wait", "", "REPLICAS[/TIMEOUT]: WAIT after every acquire, e.g. 1/100ms (a mitigation of the failover race: it narrows its window, never closes it)")
	fs.StringVar(&f.waitAOF, "wait-aof", "", "LOCAL/REPLICAS[/TIMEOUT]: WAITAOF after every acquire instead, e.g. 1/1/100ms (needs --aof)")
	fs.StringVar(&f.onShort, "on-short", string(lockclient.WaitGoOn), "what a client does when WAIT or WAITAOF falls short: go-on (keep the lock) or release (give it back and retry)")
	fs.DurationVar(&s.FenceGap, "fence-gap", 0, "mutant-fence-outside's pause between SET and INCR")
	fs.BoolVar(&s.FenceGapRandom, "fence-gap-random", false, "pause only half of mutant-fence-outside's acquires")
	fs.DurationVar(&s.ClockTolerance, "tolerance", d.ClockTolerance, "how far a server's lease may end before call + TTL on the harness clock")
	f.sourceFlags.register(fs)
}

// scenario checks the flags and returns the resolved Scenario, with a
// seed picked when none was given.
func (f *scenarioFlags) scenario() (scenarios.Scenario, error) {
	s := f.s
	s.Faults = f.faults
	if f.nodes != nil {
		s.Nodes = f.nodes.or(0)
	}
	if err := positive(f.fs, mustBePositive...); err != nil {
		return s, err
	}
	var err error
	for name, v := range map[string]struct {
		in  float64
		out *float64
	}{"stall-rate": {f.stalls, &s.StallRate}, "pause-rate": {f.pauses, &s.PauseRate}, "late-rate": {f.late, &s.LateRate}, "abandon-rate": {f.abandon, &s.AbandonRate}} {
		if v.in < 0 || v.in > 1 {
			return s, fmt.Errorf("--%s %g: want a share between 0 and 1", name, v.in)
		}
		*v.out = v.in
		if v.in == 0 {
			*v.out = scenarios.None
		}
	}
	s.ObserveEvery = f.observe
	if f.observe < 0 {
		s.ObserveEvery = scenarios.None
	}
	for _, kv := range f.nodeBuilds {
		node, b, ok := strings.Cut(kv, "=")
		if !ok || node == "" || b == "" {
			return s, fmt.Errorf("--node-build %q: want NODE=BUILD, e.g. n1=valkey-8.1", kv)
		}
		if s.NodeBuilds == nil {
			s.NodeBuilds = map[string]string{}
		}
		s.NodeBuilds[node] = b
	}
	for _, text := range f.faultAt {
		e, err := fault.ParseEvent(text, scenarios.LockKey(0))
		if err != nil {
			return s, fmt.Errorf("--fault-at: %w", err)
		}
		s.Events = append(s.Events, e)
		if !slices.Contains(s.Faults, e.Fault) {
			s.Faults = append(s.Faults, e.Fault)
		}
	}
	if s.Wait, err = parseWait(f.wait, f.waitAOF, f.onShort); err != nil {
		return s, err
	}
	if s.Seed == 0 {
		s.Seed = time.Now().UnixNano()%1_000_000_000 + 1
	}
	s = s.WithDefaults()
	return s, s.Validate()
}

// parseWait reads --wait REPLICAS[/TIMEOUT] or --wait-aof
// LOCAL/REPLICAS[/TIMEOUT].
func parseWait(wait, waitAOF, onShort string) (lockclient.WaitOptions, error) {
	w := lockclient.WaitOptions{OnShort: lockclient.WaitPolicy(onShort), Timeout: 100 * time.Millisecond}
	flagName, spec, want := "--wait", wait, 1
	switch {
	case wait != "" && waitAOF != "":
		return w, fmt.Errorf("--wait and --wait-aof: choose one")
	case waitAOF != "":
		flagName, spec, want, w.AOF = "--wait-aof", waitAOF, 2, true
	case wait == "":
		return lockclient.WaitOptions{}, nil
	}
	parts := strings.Split(spec, "/")
	if len(parts) != want && len(parts) != want+1 {
		return w, fmt.Errorf("%s %q: want %s", flagName, spec, map[int]string{1: "REPLICAS[/TIMEOUT], e.g. 1/100ms", 2: "LOCAL/REPLICAS[/TIMEOUT], e.g. 1/1/100ms"}[want])
	}
	var nums []int
	for _, p := range parts[:want] {
		n, err := strconv.Atoi(p)
		if err != nil || n < 0 {
			return w, fmt.Errorf("%s %q: %q is not a count", flagName, spec, p)
		}
		nums = append(nums, n)
	}
	if len(parts) > want {
		d, err := time.ParseDuration(parts[want])
		if err != nil || d <= 0 {
			return w, fmt.Errorf("%s %q: %q is not a timeout such as 100ms", flagName, spec, parts[want])
		}
		w.Timeout = d
	}
	if w.AOF {
		w.Local, w.Replicas = nums[0], nums[1]
	} else {
		w.Replicas = nums[0]
	}
	return w, nil
}

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
		out = strings.TrimSuffix(harness.DefaultOut(s), fmt.Sprintf("-%d", s.Seed))
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
	for _, b := range s.Builds() {
		if _, err := harness.LookupBuild(b, src); err != nil {
			return fail(stderr, "%v", err)
		}
	}
	eng, err := topology.Connect(ctx, nil)
	if err != nil {
		return fail(stderr, "%v", err)
	}
	defer eng.Close()
	if out == "" {
		out = harness.DefaultOut(s)
	}
	fmt.Fprintf(stderr, "run %s, %s, seed %d -> %s\n", s.Name(), s.Duration, s.Seed, out)
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
