package harness

import (
	"context"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"time"

	"github.com/lockcheck/lockcheck/checker"
	"github.com/lockcheck/lockcheck/history"
	"github.com/lockcheck/lockcheck/reports"
	"github.com/lockcheck/lockcheck/scenarios"
	"github.com/lockcheck/lockcheck/topology"
)

// Claims measures the claims table: every claim's scenario (see
// scenarios.RedlockClaims) by each of its clients, and each Redlock mutant
// under the default gate, over seeds 1..Runs. Each run starts a topology
// of its own (the claims differ in AOF and fsync, and a crashed node
// should not carry into the next run), Parallel at once. Like CatchRate
// it is a measurement for the README, not a test.
type Claims struct {
	// Table is the table the figures make (reports.TableClaims when
	// empty).
	Table   string
	Build   topology.Build
	Sources topology.Sources
	Claims  []scenarios.Claim
	// Mutants are run in scenarios.RedlockMutantScenario.
	Mutants  []string
	Runs     int
	Parallel int
	// Out receives claims.md, claims.json and the histories of the runs
	// worth a look.
	Out string
	Log io.Writer
}

// claimJob is one seeded run of one row.
type claimJob struct {
	row    *reports.ClaimRow
	s      scenarios.Scenario
	mutant bool
}

// Measure makes every run and writes the table after each, and at the
// end; after Ctrl-C it returns the partial figures, written too.
func (c Claims) Measure(ctx context.Context, eng *topology.Engine) (*reports.Claims, error) {
	if c.Log == nil {
		c.Log = io.Discard
	}
	if c.Runs <= 0 {
		return nil, fmt.Errorf("claims: runs must be positive")
	}
	begin, load := time.Now(), LoadAverage()
	if c.Table == "" {
		c.Table = reports.TableClaims
	}
	out := &reports.Claims{Table: c.Table, Server: c.Build.Name, Runs: c.Runs, Started: begin}
	var rows, mutants []*reports.ClaimRow
	var jobs []claimJob
	add := func(row *reports.ClaimRow, s scenarios.Scenario, mutant bool) {
		s.Server, s.Client = c.Build.Name, row.Client
		row.Command = s.Command()
		for seed := int64(1); seed <= int64(c.Runs); seed++ {
			s.Seed = seed
			jobs = append(jobs, claimJob{row: row, s: s, mutant: mutant})
		}
	}
	for _, cl := range c.Claims {
		for _, client := range cl.Clients {
			row := &reports.ClaimRow{Claim: cl.Name, Topology: string(cl.Scenario.WithDefaults().Topology), Says: cl.Says, Expect: string(cl.Expect), Client: client}
			rows = append(rows, row)
			add(row, cl.Scenario, false)
		}
	}
	for _, m := range c.Mutants {
		row := &reports.ClaimRow{Claim: m, Topology: string(topology.Redlock), Says: "a Redlock mistake, in the default workload", Expect: "caught", Client: m}
		mutants = append(mutants, row)
		add(row, scenarios.RedlockMutantScenario(), true)
	}
	lanes := max(c.Parallel, 1)
	var mu sync.Mutex // guards rows, out, n and the files
	finish := func() error {
		out.Rows, out.Mutants = out.Rows[:0], out.Mutants[:0]
		for _, r := range rows {
			out.Rows = append(out.Rows, *r)
		}
		for _, r := range mutants {
			out.Mutants = append(out.Mutants, *r)
		}
		out.Elapsed = reports.MillisOf(time.Since(begin))
		out.Machine = fmt.Sprintf("%d CPUs, %d runs at once, load average %s at the start, %s at the end", runtime.NumCPU(), lanes, load, LoadAverage())
		return reports.WriteClaims(c.Out, out)
	}
	next := make(chan claimJob, len(jobs))
	for _, j := range jobs {
		next <- j
	}
	close(next)
	n := 0
	var werr error
	var wg sync.WaitGroup
	for range lanes {
		wg.Go(func() {
			for j := range next {
				if ctx.Err() != nil {
					return
				}
				r := c.runOne(ctx, eng, j)
				if ctx.Err() != nil {
					return // interrupted: a run cut short is not a figure
				}
				mu.Lock()
				if out.Version == "" {
					out.Version = r.Version
				}
				j.row.Add(r)
				n++
				fmt.Fprintf(c.Log, "[%d/%d] %s\n", n, len(jobs), r.Line())
				if err := finish(); err != nil && werr == nil {
					werr = err
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	out.Complete = ctx.Err() == nil
	if err := finish(); err != nil && werr == nil {
		werr = err
	}
	return out, werr
}

// runOne starts the job's topology, runs its scenario, checks it and
// tears the topology down.
func (c Claims) runOne(ctx context.Context, eng *topology.Engine, j claimJob) (r reports.ClaimRun) {
	r = reports.ClaimRun{Claim: j.row.Claim, Client: j.s.Client, Seed: j.s.Seed}
	begin := time.Now()
	defer func() { r.Elapsed = reports.MillisOf(time.Since(begin)) }()
	t, err := StartScenario(ctx, eng, j.s, c.Sources, io.Discard)
	if err != nil {
		r.Error = err.Error()
		return r
	}
	defer func() {
		if terr := Teardown(ctx, t); terr != nil && r.Error == "" {
			r.Error = terr.Error()
		}
	}()
	r.Version = t.Version
	stderr := filepath.Join(c.Out, "adapters")
	if err := os.MkdirAll(stderr, 0o755); err != nil {
		r.Error = err.Error()
		return r
	}
	res, result, err := runMeasured(ctx, t, scenarios.Chaos{Workload: scenarios.Workload{Scenario: j.s}, StderrDir: stderr})
	if res != nil {
		r.Ops = len(res.History.Ops)
	}
	if err != nil {
		r.Error = err.Error()
		return r
	}
	h := res.History
	r.Verdict, r.Class = string(result.Verdict), string(result.Class)
	r.GateMet = checker.DefaultExpectation.Meets(result, h.Meta.Fenced) == nil
	if ch, ok := result.Checks.Find(checker.DoubleHolder); ok {
		r.DoubleHolders = ch.Count
	}
	if ch, ok := result.Checks.Find(checker.Resource); ok && ch.Status == checker.Fail {
		r.LostIncrements = ch.Count
	}
	if ch, ok := result.Checks.Find(checker.TTL); ok {
		for _, f := range ch.Findings {
			if f.Kind == checker.KindLateGrant {
				r.LateGrants++
			}
		}
	}
	r.StaleStopped = rejectedWrites(h)
	r.FirstDouble, r.Overlap = firstDouble(h, result)
	r.Acquires, r.Refused, r.GivenBack = acquireCosts(h)
	if r.DoubleHolders > 0 || r.LostIncrements > 0 || (j.mutant && r.GateMet) {
		name := fmt.Sprintf("%s-%s-seed%d.history.json", SafeName(j.row.Claim), SafeName(j.s.Client), j.s.Seed)
		r.History = keepHistory(c.Out, name, h, c.Log)
	}
	return r
}

// rejectedWrites counts the resource's rejections: the stale writes a
// fence stopped.
func rejectedWrites(h *history.History) int {
	n := 0
	for i := range h.Ops {
		if op := &h.Ops[i]; op.Kind == history.Write && op.Outcome == history.Fail {
			n++
		}
	}
	return n
}

// firstDouble is the time from the first fault's start to the first
// double holder that began after it, and how long that one lasted, in
// whole milliseconds rounded up (so a found one is never 0); 0 when
// either is missing.
func firstDouble(h *history.History, r *checker.Result) (to, overlap reports.Millis) {
	ch, ok := r.Checks.Find(checker.DoubleHolder)
	if !ok || len(h.Faults) == 0 {
		return 0, 0
	}
	from := h.Faults[0].Start
	var first *checker.Finding
	for i := range ch.Findings {
		if f := &ch.Findings[i]; f.Kind == checker.KindDoubleHolder && f.Start >= from && (first == nil || f.Start < first.Start) {
			first = f
		}
	}
	if first == nil {
		return 0, 0
	}
	return reports.Millis((first.Start - from + 1e6 - 1) / 1e6), reports.Millis(math.Ceil(first.OverlapMs))
}

// acquireCosts counts the acquires that took the lock, those an error
// reply refused (min-replicas-to-write's NOREPLICAS, and in every row the
// failover's own, READONLY and the like: the row without a mitigation
// shows how many of those a kill costs by itself), and those given back
// at once: a short WAIT's release, recorded as called at the instant the
// acquire returned (lockclient.Undo).
func acquireCosts(h *history.History) (took, refused, givenBack int) {
	lastAcquire := map[int]*history.Op{}
	for i := range h.Ops {
		op := &h.Ops[i]
		switch {
		case op.Kind == history.Acquire && op.Outcome == history.OK:
			took++
			lastAcquire[op.Worker] = op
		case op.Kind == history.Acquire && op.Outcome == history.Fail && op.Error != "":
			refused++
		case op.Kind == history.Release:
			if a := lastAcquire[op.Worker]; a != nil && a.Token == op.Token && a.Return == op.Call {
				givenBack++
			}
			delete(lastAcquire, op.Worker)
		}
	}
	return took, refused, givenBack
}
