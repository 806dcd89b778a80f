package main

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/lockcheck/lockcheck/reports"
	"github.com/lockcheck/lockcheck/scenarios"
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

Exit codes: 0 when every run finished, whatever the verdicts (the matrix is a
report: the unfenced client's double holders under failover are findings,
not failures); 1 when a fenced client's fence check failed in any run (a
fenced client must never let a stale holder's write through); 2 on bad
input, when a topology did not start or a run failed, or when the matrix was
interrupted (Ctrl-C stops it after tearing down the current run; index.html
then shows what finished). 1 wins over 2.

Flags:
`

// matrixPlan is what lockcheck matrix runs.
type matrixPlan struct {
	builds   []matrixBuild
	kinds    []topology.Kind
	clients  []string
	faults   []scenarios.Fault
	duration time.Duration
	ttl      time.Duration
	seed     int64
	src      sourceFlags
	out      string
}

// matrixBuild is a build and, when its image cannot be had, why.
type matrixBuild struct {
	topology.Build
	unavailable string
}

// matrixRun is one run of the matrix, and its cell in the index.
type matrixRun struct {
	build  topology.Build
	kind   topology.Kind
	client string
	fault  scenarios.Fault
	cell   int
}

func runMatrix(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlags("matrix", stderr)
	servers := fs.String("servers", "", "comma-separated builds (default: the newest Valkey build whose image is present or can be obtained)")
	topos := fs.String("topologies", "sentinel,cluster", "comma-separated topologies")
	clients := fs.String("clients", "native,fenced", "comma-separated lock clients: "+strings.Join(scenarios.Kinds(), ", ")+", or external:CMD")
	faults := fs.String("faults", "kill-primary,clock-jump", "comma-separated faults, one per run: "+strings.Join(scenarios.FaultNames(), ", "))
	duration := fs.Duration("duration", 40*time.Second, "how long each run's workload runs (kill-primary waits for a fresh acquire: about 40s with a 15s TTL)")
	seed := fs.Int64("seed", 1, "the matrix's seed; each run derives its own from it and its combination")
	ttl := fs.Duration("ttl", 15*time.Second, "lease asked for by every acquire and extend")
	out := fs.String("out", "out/matrix", "folder for index.html, matrix.json, junit.xml and one folder per run (a run's folder is replaced)")
	var sf sourceFlags
	sf.register(fs)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), matrixDoc)
		fs.PrintDefaults()
	}
	if ok, code := parse(fs, args, stderr); !ok {
		return code
	}
	if fs.NArg() > 0 {
		return fail(stderr, "unexpected argument %q: run lockcheck matrix -h for the flags", fs.Arg(0))
	}
	p := matrixPlan{duration: *duration, ttl: *ttl, seed: *seed, src: sf, out: *out}
	if code := p.parse(*topos, *clients, *faults, stderr); code != 0 {
		return code
	}
	if code := p.resolve(ctx, *servers, stderr); code != 0 {
		return code
	}
	return p.run(ctx, stdout, stderr)
}

// parse checks the lists that need no engine.
func (p *matrixPlan) parse(topos, clients, faults string, stderr io.Writer) int {
	if p.duration <= 0 || p.ttl < 10*time.Millisecond || p.seed == 0 {
		return fail(stderr, "--duration must be positive, --ttl at least 10ms and --seed not 0")
	}
	for _, name := range splitList(topos) {
		k, err := topology.ParseKind(name)
		if err != nil {
			return fail(stderr, "%v", err)
		}
		p.kinds = append(p.kinds, k)
	}
	for _, c := range splitList(clients) {
		if !strings.HasPrefix(c, scenarios.ExternalPrefix) && !scenarios.KnownKind(c) {
			return fail(stderr, "unknown client %q: choose one of %s, or external:CMD", c, strings.Join(scenarios.Kinds(), ", "))
		}
		p.clients = append(p.clients, c)
	}
	for _, name := range splitList(faults) {
		f, err := scenarios.LookupFault(name)
		if err != nil {
			return fail(stderr, "%v", err)
		}
		p.faults = append(p.faults, f)
	}
	if _, err := p.src.sources(); err != nil {
		return fail(stderr, "%v", err)
	}
	if len(p.kinds) == 0 || len(p.clients) == 0 || len(p.faults) == 0 {
		return fail(stderr, "nothing to run: name at least one topology, client and fault")
	}
	return 0
}

// resolve finds the builds and whether each image can be had. With no
// --servers it picks the newest Valkey build that can.
func (p *matrixPlan) resolve(ctx context.Context, servers string, stderr io.Writer) int {
	src, _ := p.src.sources()
	var want []topology.Build
	for _, name := range splitList(servers) {
		b, err := p.src.build(name)
		if err != nil {
			return fail(stderr, "%v", err)
		}
		want = append(want, b)
	}
	eng, err := topology.Connect(ctx, nil)
	if err != nil {
		return fail(stderr, "%v", err)
	}
	defer eng.Close()
	if len(want) == 0 {
		all := topology.Builds()
		for i := len(all) - 1; i >= 0; i-- {
			b := all[i]
			if !strings.HasPrefix(b.Name, "valkey-") {
				continue
			}
			img := eng.Resolve(ctx, b, src)
			if img.Status != topology.Unavailable {
				fmt.Fprintf(stderr, "matrix: newest available Valkey build: %s (%s %s)\n", b.Name, img.Status, img.Ref)
				p.builds = append(p.builds, matrixBuild{Build: b})
				return 0
			}
			fmt.Fprintf(stderr, "matrix: %s is unavailable: %s\n", b.Name, img.Reason)
		}
		return fail(stderr, "no Valkey build is available: make images builds them, lockcheck images says why")
	}
	for _, b := range want {
		mb := matrixBuild{Build: b}
		if img := eng.Resolve(ctx, b, src); img.Status == topology.Unavailable {
			mb.unavailable = img.Reason + "; fix: " + img.Fix
		}
		p.builds = append(p.builds, mb)
	}
	return 0
}

// layout makes the index's rows, columns and cells, and the runs to make:
// a cell is n/a where the fault does not fit the topology, unavailable
// where the build's image cannot be had, and not run until its run ends.
func (p *matrixPlan) layout() (*reports.Index, []matrixRun) {
	idx := &reports.Index{Generated: time.Now().UTC().Format(time.RFC3339), Seed: p.seed,
		Duration: p.duration.String(), TTL: p.ttl.String(), Elapsed: "0s"}
	for _, b := range p.builds {
		for _, k := range p.kinds {
			idx.Columns = append(idx.Columns, reports.IndexColumn{Server: b.Name, Topology: string(k), Reason: b.unavailable})
		}
	}
	for _, c := range p.clients {
		for _, f := range p.faults {
			idx.Rows = append(idx.Rows, reports.IndexRow{Client: c, Fault: f.Name()})
		}
	}
	var runs []matrixRun
	for _, b := range p.builds {
		for _, k := range p.kinds {
			for _, c := range p.clients {
				for _, f := range p.faults {
					cell := reports.IndexCell{Server: b.Name, Topology: string(k), Client: c, Fault: f.Name()}
					switch {
					case !f.Available(k):
						cell.Outcome, cell.Reason = reports.CellNA, fmt.Sprintf("%s does not fit a %s topology", f.Name(), k)
					case b.unavailable != "":
						cell.Outcome, cell.Reason = reports.CellUnavailable, b.unavailable
					default:
						cell.Outcome, cell.Reason = reports.CellNotRun, "the matrix stopped before this run"
						cb := matrixRun{build: b.Build, kind: k, client: c, fault: f, cell: len(idx.Cells)}
						cell.Seed = p.comboSeed(cb)
						cell.Dir = safeName(fmt.Sprintf("%s-%s-%s-%s", b.Name, k, c, f.Name()))
						cell.Replay = p.replay(cb, cell.Seed)
						runs = append(runs, cb)
					}
					idx.Cells = append(idx.Cells, cell)
				}
			}
		}
	}
	return idx, runs
}

// comboSeed derives a run's seed from the matrix's seed and the run's
// combination alone, so that a run replays the same with other
// combinations added or left out.
func (p *matrixPlan) comboSeed(c matrixRun) int64 {
	h := fnv.New64a()
	fmt.Fprintf(h, "%d/%s/%s/%s/%s", p.seed, c.build.Name, c.kind, c.client, c.fault.Name())
	return int64(h.Sum64()%999_999_999) + 1
}

// replay is the lockcheck run command that repeats one run.
func (p *matrixPlan) replay(c matrixRun, seed int64) string {
	client := c.client
	if strings.ContainsAny(client, " \t'\"") {
		client = fmt.Sprintf("%q", client)
	}
	return fmt.Sprintf("lockcheck run --server %s --topology %s --client %s --fault %s --duration %s --ttl %s --seed %d",
		c.build.Name, c.kind, client, c.fault.Name(), p.duration, p.ttl, seed)
}

// run makes every run in turn and keeps the index up to date after each.
func (p *matrixPlan) run(ctx context.Context, stdout, stderr io.Writer) int {
	idx, runs := p.layout()
	begin := time.Now()
	var names []string
	for _, b := range p.builds {
		names = append(names, b.Name)
	}
	fmt.Fprintf(stderr, "matrix: %d runs (%s × %s × %s × %s, %s each), %d n/a, %d unavailable -> %s\n",
		len(runs), strings.Join(names, ","), matrixKinds(p.kinds), strings.Join(p.clients, ","), matrixFaults(p.faults), p.duration,
		idx.Count(reports.CellNA), idx.Count(reports.CellUnavailable), filepath.Join(p.out, "index.html"))
	writeErr := p.write(idx, begin, false)
	incomplete := false
	for i, c := range runs {
		if ctx.Err() != nil {
			break
		}
		cell := &idx.Cells[c.cell]
		fmt.Fprintf(stderr, "[%d/%d] start %s %s %s %s, seed %d (elapsed %s)\n", i+1, len(runs), c.build.Name, c.kind, c.client, c.fault.Name(), cell.Seed, elapsedSince(begin))
		runBegin := time.Now()
		p.runOne(ctx, c, cell, stderr)
		switch cell.Outcome {
		case reports.CellError, reports.CellInterrupted, reports.CellNotRun:
			incomplete = true
		}
		if cell.Result != nil {
			p.setVersion(idx, cell)
		}
		fmt.Fprintf(stderr, "[%d/%d] end   %s %s %s %s: %s in %s (%d/%d done, elapsed %s)\n", i+1, len(runs), c.build.Name, c.kind, c.client, c.fault.Name(),
			matrixCellLine(cell), elapsedSince(runBegin), i+1, len(runs), elapsedSince(begin))
		if err := p.write(idx, begin, false); err != nil {
			writeErr = err
		}
	}
	if ctx.Err() != nil {
		incomplete = true
		fmt.Fprintf(stderr, "matrix: interrupted after %s: %s shows the runs that finished\n", elapsedSince(begin), filepath.Join(p.out, "index.html"))
	}
	if err := p.write(idx, begin, !incomplete); err != nil {
		writeErr = err
	}
	var totals []string
	for _, o := range reports.CellOutcomes {
		if n := idx.Count(o); n > 0 {
			totals = append(totals, fmt.Sprintf("%s %d", o.Label(), n))
		}
	}
	fmt.Fprintf(stdout, "%s in %s: %s\n", strings.Join(totals, ", "), elapsedSince(begin), filepath.Join(p.out, "index.html"))
	if writeErr != nil {
		return fail(stderr, "%v", writeErr)
	}
	for _, c := range idx.Cells {
		if c.FenceViolated() {
			fmt.Fprintf(stderr, "lockcheck: the fenced client %s let a stale write through on %s %s under %s: %s\n", c.Client, c.Server, c.Topology, c.Fault, filepath.Join(p.out, c.Link))
			return 1
		}
	}
	if incomplete {
		return usageExit
	}
	return 0
}

// runOne starts a fresh topology, runs one combination on it through
// lockcheck run's path (chaosRun), tears it down and fills the cell. The
// run's stdout (its checks table) and stderr are kept in its folder.
func (p *matrixPlan) runOne(ctx context.Context, c matrixRun, cell *reports.IndexCell, stderr io.Writer) {
	dir := filepath.Join(p.out, cell.Dir)
	if err := os.RemoveAll(dir); err != nil {
		cell.Outcome, cell.Reason = reports.CellError, err.Error()
		return
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		cell.Outcome, cell.Reason = reports.CellError, err.Error()
		return
	}
	logf, err := os.Create(filepath.Join(dir, "lockcheck.log"))
	if err != nil {
		cell.Outcome, cell.Reason = reports.CellError, err.Error()
		return
	}
	defer logf.Close()
	log := &matrixLog{w: logf}
	verdict, err := os.Create(filepath.Join(dir, "verdict.txt"))
	if err != nil {
		cell.Outcome, cell.Reason = reports.CellError, err.Error()
		return
	}
	defer verdict.Close()

	rf := runFlagDefaults()
	rf.server, rf.kind, rf.sourceFlags = c.build.Name, string(c.kind), p.src
	rf.client, rf.faults = c.client, multiFlag{c.fault.Name()}
	rf.duration, rf.ttl, rf.seed, rf.out = p.duration, p.ttl, cell.Seed, dir
	faults, code := rf.check(log)
	if code != 0 {
		cell.Outcome, cell.Reason, cell.Link = reports.CellError, log.lastError(), cell.Dir+"/lockcheck.log"
		return
	}
	eng, t, _ := rf.start(ctx, log)
	if t == nil {
		cell.Outcome, cell.Reason, cell.Link = reports.CellError, "topology did not start: "+log.lastError(), cell.Dir+"/lockcheck.log"
		if ctx.Err() != nil {
			cell.Outcome, cell.Reason, cell.Link = reports.CellNotRun, "interrupted while the topology started", ""
		}
		return
	}
	defer teardown(ctx, eng, t, stderr)
	if err := refusal(ctx, t, c.client); err != nil {
		cell.Outcome, cell.Reason = reports.CellNA, err.Error()
		return
	}
	rr, _ := chaosRun(ctx, t, rf, faults, verdict, log)
	if rr == nil {
		cell.Outcome, cell.Reason, cell.Link = reports.CellError, log.lastError(), cell.Dir+"/lockcheck.log"
		if ctx.Err() != nil {
			cell.Outcome, cell.Reason, cell.Link = reports.CellNotRun, "interrupted: "+log.lastError(), ""
		}
		return
	}
	cell.SetResult(*rr, ctx.Err() != nil)
	cell.Link = cell.Dir + "/report.html"
}

// refusal returns the refusal when the build lacks a command the
// client needs: the cell is then n/a, not an error.
func refusal(ctx context.Context, t *topology.Topology, client string) error {
	if strings.HasPrefix(client, scenarios.ExternalPrefix) {
		return nil
	}
	cfg := scenarios.ConfigFor(t)
	pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	caps, err := scenarios.Probe(pctx, cfg.Option)
	if err != nil {
		return nil // the run reports it
	}
	if err := caps.Check(client, cfg.Server, cfg.Version); errors.Is(err, scenarios.ErrUnsupported) {
		return err
	}
	return nil
}

// write saves the index as it stands.
func (p *matrixPlan) write(idx *reports.Index, begin time.Time, complete bool) error {
	idx.Elapsed, idx.Complete = elapsedSince(begin), complete
	return reports.WriteIndex(p.out, idx)
}

// setVersion names the version the servers reported in the run's column.
func (p *matrixPlan) setVersion(idx *reports.Index, cell *reports.IndexCell) {
	for i := range idx.Columns {
		col := &idx.Columns[i]
		if col.Server == cell.Server && col.Topology == cell.Topology && col.Version == "" {
			col.Version = cell.Result.Version
		}
	}
}

// runFlagDefaults are lockcheck run's flag defaults.
func runFlagDefaults() runFlags {
	var rf runFlags
	rf.register(newFlags("run", io.Discard))
	return rf
}

// matrixLog keeps a run's stderr in its folder and remembers its last
// "lockcheck:" line, the reason a run failed.
type matrixLog struct {
	mu   sync.Mutex
	w    io.Writer
	last string
}

func (l *matrixLog) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, line := range strings.Split(string(b), "\n") {
		if msg, ok := strings.CutPrefix(strings.TrimSpace(line), "lockcheck: "); ok {
			l.last = msg
		}
	}
	return l.w.Write(b)
}

func (l *matrixLog) lastError() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.last == "" {
		return "no reason given: see lockcheck.log"
	}
	return l.last
}

func matrixCellLine(c *reports.IndexCell) string {
	s := c.Text()
	if c.Reason != "" && c.Outcome != reports.CellInterrupted {
		s += " (" + c.Reason + ")"
	}
	return s
}

func elapsedSince(t time.Time) string { return time.Since(t).Round(time.Second).String() }

func matrixKinds(ks []topology.Kind) string {
	var s []string
	for _, k := range ks {
		s = append(s, string(k))
	}
	return strings.Join(s, ",")
}

func matrixFaults(fs []scenarios.Fault) string {
	var s []string
	for _, f := range fs {
		s = append(s, f.Name())
	}
	return strings.Join(s, ",")
}
