package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"text/tabwriter"
	"time"

	"github.com/lockcheck/lockcheck/checker"
	"github.com/lockcheck/lockcheck/history"
	"github.com/lockcheck/lockcheck/reports"
	"github.com/lockcheck/lockcheck/scenarios"
	"github.com/lockcheck/lockcheck/topology"
)

// runFlags are lockcheck run's flags, shared with matrix.
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
	out      string
}

func (f *runFlags) register(fs *flag.FlagSet) {
	f.topoFlags.register(fs)
	fs.StringVar(&f.client, "client", "native", "lock client: "+strings.Join(scenarios.Kinds(), ", ")+", or external:CMD")
	fs.Var(&f.faults, "fault", "fault to inject (repeatable): "+strings.Join(scenarios.FaultNames(), ", "))
	fs.DurationVar(&f.duration, "duration", 60*time.Second, "how long the workload runs")
	fs.Int64Var(&f.seed, "seed", 0, "seed for the workload's choices and the fault schedule (0: pick one and print it)")
	fs.IntVar(&f.clients, "clients", 6, "logical clients")
	fs.IntVar(&f.keys, "keys", 1, "lock keys (few keys, many clients: every lock is contended)")
	fs.DurationVar(&f.ttl, "ttl", 15*time.Second, "lease asked for by every acquire and extend; longer than a failover, so a lock lost with a primary is still believed held when the new primary hands it out")
	fs.DurationVar(&f.workMin, "work-min", 0, "shortest work while holding (default TTL/5: longer than a failover)")
	fs.DurationVar(&f.workMax, "work-max", 0, "longest work while holding (default 2 TTL/5: before the first extend at TTL/3, mostly; some holds stall past the TTL)")
	fs.StringVar(&f.out, "out", "", "folder for the run's files (default runs/<time>-<server>-<topology>-<client>)")
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
	faults, code := rf.check(stderr)
	if code != 0 {
		return code
	}
	eng, t, code := rf.start(ctx, stderr)
	if t == nil {
		return code
	}
	defer teardown(ctx, eng, t, stderr)
	res, code := chaosRun(ctx, t, rf, faults, stdout, stderr)
	if res == nil {
		return code
	}
	return code
}

// check validates the flags that need no engine.
func (rf *runFlags) check(stderr io.Writer) ([]scenarios.Fault, int) {
	if rf.duration <= 0 || rf.clients <= 0 || rf.keys <= 0 || rf.ttl < 10*time.Millisecond {
		return nil, fail(stderr, "--duration, --clients, --keys must be positive and --ttl at least 10ms")
	}
	if !strings.HasPrefix(rf.client, scenarios.ExternalPrefix) && !scenarios.KnownKind(rf.client) {
		return nil, fail(stderr, "unknown client %q: choose one of %s, or external:CMD", rf.client, strings.Join(scenarios.Kinds(), ", "))
	}
	kind, err := topology.ParseKind(rf.kind)
	if err != nil {
		return nil, fail(stderr, "%v", err)
	}
	var faults []scenarios.Fault
	for _, name := range rf.faults {
		f, err := scenarios.LookupFault(name)
		if err != nil {
			return nil, fail(stderr, "%v", err)
		}
		if !f.Available(kind) {
			return nil, fail(stderr, "fault %s does not fit a %s topology: choose a topology with replicas (sentinel or cluster)", name, kind)
		}
		faults = append(faults, f)
	}
	if rf.workMin <= 0 {
		rf.workMin = rf.ttl / 5
	}
	if rf.workMax <= 0 {
		rf.workMax = 2 * rf.ttl / 5
	}
	if rf.workMax < rf.workMin {
		return nil, fail(stderr, "--work-max %s is shorter than --work-min %s", rf.workMax, rf.workMin)
	}
	if rf.seed == 0 {
		rf.seed = time.Now().UnixNano() % 1_000_000_000
	}
	return faults, 0
}

// chaosRun runs the workload and faults on a started topology, checks the
// history and writes the run's folder. It returns the result and the exit
// code.
func chaosRun(ctx context.Context, t *topology.Topology, rf runFlags, faults []scenarios.Fault, stdout, stderr io.Writer) (*reports.RunResult, int) {
	out := rf.out
	if out == "" {
		out = filepath.Join("runs", fmt.Sprintf("%s-%s-%s-%s-%d", time.Now().Format("20060102-150405"), t.Build.Name, t.Kind, safeName(rf.client), rf.seed))
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return nil, fail(stderr, "output folder: %v", err)
	}
	fmt.Fprintf(stderr, "run %s %s %s, faults %s, %s, seed %d -> %s\n", t.Build.Name, t.Kind, rf.client, orNone(rf.faults), rf.duration, rf.seed, out)
	rec := history.NewRecorder()
	var injected atomic.Int64
	chaos := scenarios.Chaos{
		Workload: scenarios.Workload{Client: rf.client, Clients: rf.clients, Keys: rf.keys, TTL: rf.ttl, Duration: rf.duration, Seed: rf.seed, Recorder: rec,
			WorkMin: rf.workMin, WorkMax: rf.workMax,
			Log: fileLogger(filepath.Join(out, "run.log"))},
		Faults:    faults,
		AOF:       rf.aof,
		StderrDir: out,
		Log:       fileLogger(filepath.Join(out, "run.log")),
		Injected:  func(scenarios.Event, error) { injected.Add(1) },
	}
	stopProgress := progressLine(ctx, stderr, rec, &injected)
	res, err := chaos.Run(ctx, t)
	stopProgress()
	// The checks and files are written after Ctrl-C too.
	wctx := context.WithoutCancel(ctx)
	t.SaveLogs(wctx, filepath.Join(out, "nodes"))
	if err != nil {
		return nil, fail(stderr, "%v", err)
	}
	h := res.History
	if err := h.Save(filepath.Join(out, "history.json")); err != nil {
		return nil, fail(stderr, "%v", err)
	}
	result, err := checker.Run(wctx, h, CheckOptions(h))
	if err != nil {
		return nil, fail(stderr, "check: %v", err)
	}
	rr := reports.NewRunResult(h, result, res.Notes)
	if err := writeRunFiles(out, h, result, rr); err != nil {
		return nil, fail(stderr, "%v", err)
	}
	printVerdict(stdout, rr, out)
	code := result.Verdict.ExitCode()
	if ctx.Err() != nil && code != 1 {
		fmt.Fprintf(stderr, "lockcheck: run interrupted after %s: the results in %s are partial\n", time.Duration(h.Meta.DurationNs).Round(time.Second), out)
		code = usageExit
	}
	return &rr, code
}

// CheckOptions are the checks a run's history gets: a client that draws
// fences may see double holders under faults (the resource's fence check
// must hold), one that does not may not.
func CheckOptions(h *history.History) checker.Options {
	return checker.Options{AllowDoubleHolders: h.Meta.Fenced}
}

func writeRunFiles(out string, h *history.History, result *checker.Result, rr reports.RunResult) error {
	if err := rr.Save(filepath.Join(out, "result.json")); err != nil {
		return err
	}
	var j reports.JUnit
	j.Name = "lockcheck"
	j.Add(rr.Suite(fmt.Sprintf("%s %s %s %s", rr.Server, rr.Topology, rr.Client, strings.Join(rr.Faults, "+"))))
	if err := j.Write(filepath.Join(out, "junit.xml")); err != nil {
		return err
	}
	return reports.WriteReport(out, h, result)
}

func printVerdict(w io.Writer, rr reports.RunResult, out string) {
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "CHECK\tSTATUS\tCOUNT\tSUMMARY\n")
	for _, c := range rr.Checks {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\n", c.Name, c.Status, c.Count, c.Summary)
	}
	tw.Flush()
	for _, n := range rr.Notes {
		fmt.Fprintf(w, "note: %s\n", n)
	}
	fmt.Fprintf(w, "verdict: %s (%d ops, seed %d); report: %s\n", strings.ToUpper(string(rr.Verdict)), rr.Ops, rr.Seed, filepath.Join(out, "report.html"))
}

// progressLine prints elapsed time, operations, faults injected and the
// violations found so far, once a second, on one line.
func progressLine(ctx context.Context, w io.Writer, rec *history.Recorder, injected *atomic.Int64) func() {
	done := make(chan struct{})
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		violations, lastCheck := 0, time.Now()
		for {
			select {
			case <-done:
				fmt.Fprintln(w)
				return
			case <-ctx.Done():
				fmt.Fprintln(w)
				return
			case <-tick.C:
			}
			if time.Since(lastCheck) >= 5*time.Second {
				violations, lastCheck = quickViolations(ctx, rec), time.Now()
			}
			fmt.Fprintf(w, "\r%6.0fs  ops %-8d faults %-3d violations so far %d   ", time.Since(rec.Started()).Seconds(), rec.Len(), injected.Load(), violations)
		}
	}()
	return func() { close(done); <-stopped }
}

// quickViolations runs the interval checks (no linearizability search) on
// the history so far.
func quickViolations(ctx context.Context, rec *history.Recorder) int {
	h := rec.History(history.Meta{})
	res, err := checker.Run(ctx, h, checker.Options{Skip: []string{"linearizability"}})
	if err != nil {
		return 0
	}
	n := 0
	for _, c := range res.Checks {
		if c.Name == "double_holder" || c.Name == "fence" || c.Name == "resource" {
			n += c.Count
		}
	}
	return n
}

func orNone(list []string) string {
	if len(list) == 0 {
		return "none"
	}
	return strings.Join(list, "+")
}

func safeName(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '.' {
			return r
		}
		return '_'
	}, s)
}
