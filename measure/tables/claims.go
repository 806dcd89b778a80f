package tables

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/lockcheck/lockcheck/harness"
	"github.com/lockcheck/lockcheck/measure"
	"github.com/lockcheck/lockcheck/reports"
	"github.com/lockcheck/lockcheck/scenarios"
	"github.com/lockcheck/lockcheck/scenarios/lockclient"
	"github.com/lockcheck/lockcheck/topology"
)

// Claims measures the claims table: every claim's scenario (see
// scenarios.RedlockClaims) by each of its clients, and each Redlock mutant
// under the default gate, over seeds 1..Runs; or, with Table
// reports.TableMitigations, the failover race under each mitigation. Each
// run starts a topology of its own (the claims differ in AOF and fsync,
// and a crashed node should not carry into the next run), Parallel at
// once. Like CatchRate it is a measurement for the README, not a test.
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
	// Shard is the part of the runs this measurement makes (all when
	// zero); lockcheck merge joins the shards' folders.
	Shard measure.Shard
	// Out receives claims.md, claims.json and the histories of the runs
	// worth a look.
	Out string
	Log io.Writer
	// Earlier is the table an interrupted measurement of the same plan
	// left in Out (see ReadEarlierClaims): its runs are not made again.
	Earlier *reports.Claims
}

// claimJob is one seeded run of one row.
type claimJob struct {
	claim, client string
	s             scenarios.Scenario
	mutant        bool
}

func (j claimJob) key() string { return runKey(j.claim, j.client, j.s.Seed) }

// runKey names one seeded run of a row, in the plan and in a shard's file.
func runKey(claim, client string, seed int64) string {
	return fmt.Sprintf("%s / %s seed %d", claim, client, seed)
}

// rows are the table's rows and the mutants' before any run, and the
// plan: every row's seeds, one run each.
func (c Claims) rows() (rows, mutants []reports.ClaimRow, plan measure.Plan[claimJob]) {
	add := func(row *reports.ClaimRow, s scenarios.Scenario, mutant bool) {
		s.Server = cmp.Or(s.Server, c.Build.Name)
		s.Client = row.Client
		row.Command = s.Command()
		for seed := int64(1); seed <= int64(c.Runs); seed++ {
			s.Seed = seed
			plan.Items = append(plan.Items, claimJob{claim: row.Claim, client: row.Client, s: s, mutant: mutant})
		}
	}
	for _, cl := range c.Claims {
		for _, client := range cl.Clients {
			row := reports.ClaimRow{Claim: cl.Name, Topology: string(cl.Scenario.Topology), Says: cl.Says, Expect: string(cl.Expect), Client: client, Notice: scenarios.NoticeOf(client)}
			add(&row, cl.Scenario, false)
			rows = append(rows, row)
		}
	}
	for _, m := range c.Mutants {
		row := reports.ClaimRow{Claim: m, Topology: string(topology.Redlock), Says: "a Redlock mistake, in the default workload", Expect: "caught", Client: m}
		add(&row, scenarios.RedlockMutantScenario(), true)
		mutants = append(mutants, row)
	}
	plan.Key = claimJob.key
	return rows, mutants, plan
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
	if c.Table == "" {
		c.Table = reports.TableClaims
	}
	rows, mutants, plan := c.rows()
	done, sp, err := c.done(plan)
	if err != nil {
		return nil, err
	}
	out := &reports.Claims{Table: c.Table, Server: c.Build.Name, Runs: c.Runs, Started: sp.begin}
	runner := measure.Runner{Workers: max(c.Parallel, 1), Shard: c.Shard, Log: c.Log, Unit: "runs"}
	ctx, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	stuck := lockclient.LeftRunning()
	_, err = measure.Resume(ctx, runner, plan, done, func(ctx context.Context, l *measure.Lane, j claimJob) (reports.ClaimRun, error) {
		r := c.runOne(ctx, eng, l, j)
		if ctx.Err() != nil {
			return r, ctx.Err() // interrupted: a run cut short is not a figure
		}
		l.Progress(r.Line())
		if lockclient.LeftRunning() > stuck {
			stop(fmt.Errorf("a lock client's Close did not return in a run that ended by %s (the folders of the runs going on then are kept in %s: the one whose run.log says \"client did not close\"), and it is left running inside this process, where it would starve the runs after it; the runs in flight were stopped and the figures so far are in %s: go on in a new process with --resume", runKey(r.Claim, r.Client, r.Seed), filepath.Join(c.Out, leftRunningDir), c.Out))
		}
		return r, nil
	}, func(s *measure.Snapshot[reports.ClaimRun]) error {
		out.Version, out.Rows, out.Mutants = tallyClaims(rows, mutants, values(s.Results))
		out.Elapsed, out.Machine, out.Complete, out.Part = sp.elapsed(), sp.machine(s.Machine), s.Complete, s.Part
		return reports.WriteClaims(c.Out, out)
	})
	if cause := context.Cause(ctx); err == nil && cause != nil && cause != context.Canceled {
		err = cause
	}
	return out, err
}

// done is what c.Earlier measured of plan, checked against c's shard
// (the runs that ended in an error are left out, to be made again), and
// the span the table goes on with.
func (c Claims) done(plan measure.Plan[claimJob]) (*measure.Done[reports.ClaimRun], span, error) {
	if c.Earlier == nil {
		return nil, newSpan(time.Time{}, 0, ""), nil
	}
	e := c.Earlier
	if e.Table != c.Table || e.Runs != c.Runs || e.Server != c.Build.Name || !sameShard(e.Part, c.Shard) {
		return nil, span{}, fmt.Errorf("%s holds a %s table of %d seeds on %s, %s: resume it with the same --table, --runs, --server and --shard", c.Out, e.Table, e.Runs, e.Server, partName(e.Part))
	}
	done, err := doneOf(plan, c.Shard, claimRuns(e), func(r reports.ClaimRun) string { return runKey(r.Claim, r.Client, r.Seed) },
		func(r reports.ClaimRun) bool { return r.Error == "" }, c.Out)
	return done, newSpan(e.Started, e.Elapsed, e.Machine), err
}

// CheckEarlier says, before anything starts, whether c can go on from
// c.Earlier.
func (c Claims) CheckEarlier() error {
	_, _, plan := c.rows()
	_, _, err := c.done(plan)
	return err
}

// partName says which part of a plan a table holds.
func partName(p measure.Part) string {
	if p.Shards < 2 {
		return "the whole plan"
	}
	return fmt.Sprintf("shard %d/%d", p.Shard, p.Shards)
}

// tallyClaims adds the runs, in plan order, into copies of the rows and
// the mutants' rows they belong to; version is the first run's servers'.
func tallyClaims(rows, mutants []reports.ClaimRow, runs []reports.ClaimRun) (version string, outRows, outMutants []reports.ClaimRow) {
	outRows, outMutants = blank(rows), blank(mutants)
	at := map[string]*reports.ClaimRow{}
	for _, list := range [][]reports.ClaimRow{outRows, outMutants} {
		for i := range list {
			at[list[i].Claim+" / "+list[i].Client] = &list[i]
		}
	}
	for _, r := range runs {
		if version == "" {
			version = r.Version
		}
		if row := at[r.Claim+" / "+r.Client]; row != nil {
			row.Add(r)
		}
	}
	return version, outRows, outMutants
}

// blank copies rows without their runs: what rows() says of a row before
// any run (the notice the card lists included).
func blank(rows []reports.ClaimRow) []reports.ClaimRow {
	out := make([]reports.ClaimRow, len(rows))
	for i, r := range rows {
		out[i] = reports.ClaimRow{Claim: r.Claim, Topology: r.Topology, Says: r.Says, Expect: r.Expect, Client: r.Client, Command: r.Command, Notice: r.Notice}
	}
	return out
}

// runOne runs the job's scenario on a topology of its own, through
// harness.Execute, and takes its figures.
func (c Claims) runOne(ctx context.Context, eng *topology.Engine, l *measure.Lane, j claimJob) (r reports.ClaimRun) {
	r = reports.ClaimRun{Claim: j.claim, Client: j.s.Client, Seed: j.s.Seed}
	begin := time.Now()
	defer func() { r.Elapsed = reports.MillisOf(time.Since(begin)) }()
	stderr := filepath.Join(c.Out, "adapters")
	if err := os.MkdirAll(stderr, 0o755); err != nil {
		r.Error = err.Error()
		return r
	}
	stuck := lockclient.LeftRunning()
	run, err := runCounted(c.Out, stderr, func(o harness.Options) (*harness.Outcome, error) {
		o.Sources, o.Log = c.Sources, io.Discard
		return harness.Execute(ctx, eng, j.s, o)
	})
	if err != nil {
		r.Error = err.Error()
		return r
	}
	defer run.drop()
	if lockclient.LeftRunning() > stuck {
		// the evidence of a Close that did not return: its log and ops
		run.keepFolder(c.Out, filepath.Join(leftRunningDir, runFileStem(j)), l.Logf)
	}
	r.Version, r.Ops = run.outcome.Result.Version, run.ops()
	h, err := run.history()
	if err != nil {
		r.Error = err.Error()
		return r
	}
	claimFigures(&r, h, run.result())
	if r.DoubleHolders > 0 || r.LostIncrements > 0 || j.mutant == r.GateMet || r.NeverTold > 0 {
		r.History = run.keep(c.Out, runFileStem(j)+".history.json", l.Logf)
	}
	return r
}

// leftRunningDir is the folder under a claims measurement's where the
// folder of a run whose lock client's Close did not return is kept.
const leftRunningDir = "left-running"

// runFileStem is the stem of a run's kept files (its claim, client and
// seed, safe in a path); runKey is the same run as the terminal names it.
func runFileStem(j claimJob) string {
	return fmt.Sprintf("%s-%s-seed%d", scenarios.SafeName(j.claim), scenarios.SafeName(j.s.Client), j.s.Seed)
}
