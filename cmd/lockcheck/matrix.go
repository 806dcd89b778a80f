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
	"github.com/lockcheck/lockcheck/scenarios/fault"
	"github.com/lockcheck/lockcheck/scenarios/lockclient"
	"github.com/lockcheck/lockcheck/topology"
)

// matrixDoc is lockcheck matrix -h's header: what it does and its exit codes.
const matrixDoc = `usage: lockcheck matrix [flags]

Runs every combination of client × fault × build × topology, one run per
combination, each on a fresh topology with one fault, and writes into --out:
index.html (the summary table; every cell links to its run's report),
matrix.json (the same data), junit.xml (one suite per run) and one folder per
run with lockcheck run's files. A fault that does not fit a topology gives an
n/a cell; an unavailable build gives unavailable cells with the reason.
With --shard I/N it runs only every N-th runnable cell, from the I-th, with
the whole matrix's seeds; lockcheck merge joins the N folders into one.

Exit codes: 0 when every run finished, whatever the verdicts (the matrix is a
report: the unfenced client's double holders under failover are findings,
not failures); 1 when a fenced client's fence check failed in any run (a
fenced client must never let a stale holder's write through); 2 on bad
input, when a topology did not start or a run failed, or when the matrix was
interrupted (Ctrl-C stops it after tearing down the runs in progress; index.html
then shows what finished). 1 wins over 2.

Flags:
`

func runMatrix(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlags("matrix", stderr)
	servers := fs.String("servers", "", "comma-separated builds (default: the newest Valkey build whose image is present or can be obtained)")
	topos := fs.String("topologies", "sentinel,cluster", "comma-separated topologies")
	clients := fs.String("clients", "native,fenced", "comma-separated lock clients: "+strings.Join(lockclient.Kinds(), ", ")+", or external:CMD")
	faults := fs.String("faults", "kill-primary,clock-jump", "comma-separated faults, one per run: "+strings.Join(fault.Names(), ", "))
	expect := fs.String("expect", "", "exit 0 or 1 by this expectation of every run alone: lock-correct, safe or fence-holds (default: 1 only for a fenced client's stale write)")
	stop := fs.Bool("stop-on-violation", false, "end each run at its first violation the client's options do not allow (its verdict is then known)")
	duration := fs.Duration("duration", 30*time.Second, "how long each run's workload runs at least: one fault step, and the run goes on past it until a lease after the step ended (at most as long again)")
	seed := fs.Int64("seed", 1, "the matrix's seed; each run derives its own from it and its combination")
	ttl := fs.Duration("ttl", scenarios.Scenario{}.WithDefaults().TTL, "lease asked for by every acquire and extend")
	shard := fs.String("shard", "", "I/N: run only the I-th of N parts of the matrix (same seeds as the whole; lockcheck merge joins the parts' folders)")
	out := fs.String("out", "out/matrix", "folder for index.html, matrix.json, junit.xml and one folder per run (a run's folder is replaced)")
	parallel := fs.Int("parallel", 1, "runs at once, each on its own topology")
	var sf sourceFlags
	sf.register(fs)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), matrixDoc)
		fs.PrintDefaults()
	}
	if ok, code := parse(fs, args, stderr); !ok {
		return code
	}
	e, code := parseExpect(*expect, stderr)
	if code != 0 {
		return code
	}
	if fs.NArg() > 0 {
		return fail(stderr, "unexpected argument %q: run lockcheck matrix -h for the flags", fs.Arg(0))
	}
	if *parallel < 1 {
		return fail(stderr, "--parallel %d: give 1 or more runs at once", *parallel)
	}
	m := harness.Matrix{Duration: *duration, TTL: *ttl, Seed: *seed, Out: *out, Log: stderr, StopOnViolation: *stop, Parallel: *parallel}
	if *shard != "" {
		if _, err := fmt.Sscanf(*shard, "%d/%d", &m.Shard, &m.Shards); err != nil || m.Shards < 1 || m.Shard < 1 || m.Shard > m.Shards || fmt.Sprintf("%d/%d", m.Shard, m.Shards) != *shard {
			return fail(stderr, "--shard %q: want I/N with 1 <= I <= N, e.g. 2/3", *shard)
		}
	}
	want, code := parseMatrix(&m, sf, *servers, *topos, *clients, *faults, stderr)
	if code != 0 {
		return code
	}
	eng, err := topology.Connect(ctx, nil)
	if err != nil {
		return fail(stderr, "%v", err)
	}
	defer eng.Close()
	if m.Builds, err = harness.ResolveBuilds(ctx, eng, want, m.Sources, stderr); err != nil {
		return fail(stderr, "%v", err)
	}
	begin := time.Now()
	idx, err := m.Run(ctx, eng)
	if ctx.Err() != nil {
		fmt.Fprintf(stderr, "matrix: interrupted after %s: %s shows the runs that finished\n", time.Since(begin).Round(time.Second), filepath.Join(m.Out, "index.html"))
	}
	fmt.Fprintf(stdout, "%s%s in %s: %s\n", totals(idx), expected(idx), time.Since(begin).Round(time.Second), filepath.Join(m.Out, "index.html"))
	for _, u := range idx.Unexpected() {
		fmt.Fprintf(stdout, "  not as expected: %s\n", u)
	}
	if err != nil {
		return fail(stderr, "%v", err)
	}
	code = matrixExit(idx, m.Out, e, stderr)
	if code == 0 && m.Shards > 1 {
		fmt.Fprintf(stderr, "matrix: shard %d of %d done; lockcheck merge --out DIR %s ... joins it with the others\n", m.Shard, m.Shards, m.Out)
	}
	return code
}

// totals counts a matrix's cells by outcome, in one line.
func totals(idx *reports.Index) string {
	var parts []string
	for _, o := range reports.CellOutcomes {
		if n := idx.Count(o); n > 0 {
			parts = append(parts, fmt.Sprintf("%s %d", o.Label(), n))
		}
	}
	return strings.Join(parts, ", ")
}

// expected is the totals line's "; as expected N of M" for the cells with
// an expected outcome, or nothing when none has one.
func expected(idx *reports.Index) string {
	as, of := idx.AsExpected()
	if of == 0 {
		return ""
	}
	return fmt.Sprintf("; as expected %d of %d", as, of)
}

// matrixExit is a finished matrix's exit code (see matrixDoc): 1 when a
// fenced client's fence failed anywhere, said on stderr; 2 when a run did
// not finish; else 0.
func matrixExit(idx *reports.Index, out string, expect checker.Expectation, stderr io.Writer) int {
	if expect != "" {
		code := 0
		for _, c := range idx.Cells {
			if c.Verdict == "" {
				continue // no run here: unavailable, n/a, another shard's
			}
			if err := expect.MeetsClass(c.Class, c.Fenced, c.Summary); err != nil {
				fmt.Fprintf(stderr, "lockcheck: %s on %s %s under %s: %v: %s\n", c.Client, c.Server, c.Topology, c.Fault, err, filepath.Join(out, c.Link))
				code = 1
			}
		}
		if code != 0 {
			return code
		}
		if !idx.Complete || harness.Incomplete(idx) > 0 {
			return usageExit
		}
		return 0
	}
	for _, c := range idx.Cells {
		if c.FenceViolated() {
			fmt.Fprintf(stderr, "lockcheck: the fenced client %s let a stale write through on %s %s under %s: %s\n", c.Client, c.Server, c.Topology, c.Fault, filepath.Join(out, c.Link))
			return 1
		}
	}
	if !idx.Complete || harness.Incomplete(idx) > 0 {
		return usageExit
	}
	return 0
}

// parseMatrix checks the flags that need no engine and fills m; it returns
// the builds named by --servers (none: the newest available one is picked).
func parseMatrix(m *harness.Matrix, sf sourceFlags, servers, topos, clients, faults string, stderr io.Writer) ([]topology.Build, int) {
	if m.Duration <= 0 || m.TTL < 10*time.Millisecond || m.Seed == 0 {
		return nil, fail(stderr, "--duration must be positive, --ttl at least 10ms and --seed not 0")
	}
	for _, name := range splitList(topos) {
		k, err := topology.ParseKind(name)
		if err != nil {
			return nil, fail(stderr, "%v", err)
		}
		m.Kinds = append(m.Kinds, k)
	}
	for _, c := range splitList(clients) {
		if code := checkClient(c, stderr); code != 0 {
			return nil, code
		}
		m.Clients = append(m.Clients, c)
	}
	for _, name := range splitList(faults) {
		if _, err := fault.Lookup(name); err != nil {
			return nil, fail(stderr, "%v", err)
		}
		m.Faults = append(m.Faults, name)
	}
	src, err := sf.sources()
	if err != nil {
		return nil, fail(stderr, "%v", err)
	}
	m.Sources = src
	if len(m.Kinds) == 0 || len(m.Clients) == 0 || len(m.Faults) == 0 {
		return nil, fail(stderr, "nothing to run: name at least one topology, client and fault")
	}
	want, err := sf.builds(splitList(servers))
	if err != nil {
		return nil, fail(stderr, "%v", err)
	}
	return want, 0
}
