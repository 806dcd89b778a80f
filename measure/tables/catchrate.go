package tables

import (
	"context"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/lockcheck/lockcheck/checker"
	"github.com/lockcheck/lockcheck/harness"
	"github.com/lockcheck/lockcheck/measure"
	"github.com/lockcheck/lockcheck/reports"
	"github.com/lockcheck/lockcheck/scenarios"
	"github.com/lockcheck/lockcheck/scenarios/fault"
	"github.com/lockcheck/lockcheck/topology"
)

// CatchRate measures how often each mutant's randomized scenario catches
// it: the mutant and its control run over seeds 1..Runs, one after the
// other, on a standalone topology that is flushed between runs. It is a
// measurement, not a test: the suite's gating specs are scripted, and a
// randomized scenario's hit rate goes into the README as a figure.
type CatchRate struct {
	Build   topology.Build
	Sources topology.Sources
	Cases   []scenarios.MutantCase
	// Runs is the number of seeds per mutant and per control.
	Runs int
	// Parallel is how many mutants are measured at once, each on a
	// standalone topology of its own (1 when 0). The runs mostly sleep
	// through their leases, so a few lanes share two cores.
	Parallel int
	// Shard is the part of the mutants this measurement makes (all when
	// zero); lockcheck merge joins the shards' folders.
	Shard measure.Shard
	// Duration, when positive, replaces each case's run length.
	Duration time.Duration
	// Gate, when set, measures the default gate instead of each case's
	// tuned scenario: every mutant runs this one scenario (the default
	// workload with only its TTL, clients, keys and duration given) and
	// is caught when the run does not meet the default expectation
	// (lock-correct), by whichever check. Controls are not run: the
	// correct clients' runs of the same scenario are false-alarms'.
	Gate *scenarios.Scenario
	// Out receives catch-rate.md, catch-rate.json and the histories of the
	// runs worth a look (a mutant missed, a control's false alarm).
	Out string
	// Log gets the image and topology progress and one line per run.
	Log io.Writer
	// Earlier is the table an interrupted measurement of the same plan
	// left in Out (ReadEarlier): its mutants are not measured again.
	Earlier *reports.CatchRate
}

// done is what c.Earlier measured, checked against c's plan and shard
// (a mutant whose runs did not all run, or were cut short, is measured
// again), and the span the table goes on with.
func (c CatchRate) done() (*measure.Done[reports.CatchRow], span, error) {
	e := c.Earlier
	if e == nil {
		return nil, newSpan(time.Time{}, 0, ""), nil
	}
	gate := ""
	if c.Gate != nil {
		gate = c.Gate.Outline()
	}
	if e.Runs != c.Runs || e.Server != c.Build.Name || e.Gate != gate || !sameShard(e.Part, c.Shard) {
		return nil, span{}, fmt.Errorf("%s holds a catch rate of %d seeds on %s, %s, another gate or none: resume it with the same --gate, --runs, --server and --shard", c.Out, e.Runs, e.Server, partName(e.Part))
	}
	// a row the interruption cut short holds fewer runs than asked for
	whole := func(r reports.CatchRow) bool {
		return r.Errors == 0 && r.MutantRuns == c.Runs && (c.Gate != nil || r.ControlRuns == c.Runs)
	}
	done, err := doneOf(c.plan(), c.Shard, e.Rows, func(r reports.CatchRow) string { return r.Mutant }, whole, c.Out)
	return done, newSpan(e.Started, e.Elapsed, e.Machine), err
}

// CheckEarlier says, before anything starts, whether c can go on from
// c.Earlier.
func (c CatchRate) CheckEarlier() error {
	_, _, err := c.done()
	return err
}

// plan is one item per mutant, each making Runs seeds of every side.
func (c CatchRate) plan() measure.Plan[scenarios.MutantCase] {
	return measure.Plan[scenarios.MutantCase]{Items: c.Cases,
		Key:   func(mc scenarios.MutantCase) string { return mc.Client },
		Steps: func(scenarios.MutantCase) int { return c.Runs * len(c.sides()) }}
}

// Measure starts the topologies, makes every run, writes the report after
// each mutant and at the end, and tears the topologies down on every path.
// After Ctrl-C (ctx ended) it returns the partial figures, written too.
func (c CatchRate) Measure(ctx context.Context, eng *topology.Engine) (cr *reports.CatchRate, err error) {
	if c.Log == nil {
		c.Log = io.Discard
	}
	if c.Runs <= 0 {
		return nil, fmt.Errorf("catch-rate: runs must be positive")
	}
	plan := c.plan()
	done, sp, err := c.done()
	if err != nil {
		return nil, err
	}
	runner := measure.Runner{Workers: max(c.Parallel, 1), Shard: c.Shard, Log: c.Log, Unit: "topologies"}
	topos, err := c.start(ctx, eng, measure.Lanes(runner, plan))
	defer func() {
		for _, t := range topos {
			if terr := harness.Teardown(ctx, t); terr != nil && err == nil {
				err = terr
			}
		}
	}()
	if err != nil {
		return nil, err
	}
	t0 := topos[0]
	cr = &reports.CatchRate{Server: t0.Build.Name, Version: t0.Version, Topology: string(t0.Kind), Runs: c.Runs, Started: sp.begin}
	if c.Gate != nil {
		cr.Gate = c.Gate.Outline()
	}
	_, err = measure.Resume(ctx, runner, plan, done, func(ctx context.Context, l *measure.Lane, mc scenarios.MutantCase) (reports.CatchRow, error) {
		return c.measureCase(ctx, l, topos[l.Worker], mc), nil
	}, func(s *measure.Snapshot[reports.CatchRow]) error {
		cr.Rows = values(s.Results)
		cr.Elapsed, cr.Machine, cr.Complete, cr.Part = sp.elapsed(), sp.machine(s.Machine), s.Complete, s.Part
		return reports.WriteCatchRate(c.Out, cr)
	})
	return cr, err
}

// start starts the lanes' standalone topologies. A mutant caught through
// a network fault needs its clients' links proxied; the lanes are
// shared, so every case then runs through proxies.
func (c CatchRate) start(ctx context.Context, eng *topology.Engine, lanes int) ([]*topology.Topology, error) {
	proxy := false
	for _, mc := range c.Cases {
		proxy = proxy || (c.Gate == nil && fault.NeedsClientProxy(mc.Scenario.Faults))
	}
	topos := make([]*topology.Topology, 0, lanes)
	for range lanes {
		t, err := topology.Start(ctx, eng, c.Build, topology.Standalone, topology.WithOptions(topology.Options{ProxyClients: proxy}), topology.WithSources(c.Sources), topology.WithLog(c.Log))
		if err != nil {
			return topos, err
		}
		topos = append(topos, t)
	}
	return topos, nil
}

// measureCase makes one mutant's seeds, each by the mutant and its
// control, and tallies them into its row.
func (c CatchRate) measureCase(ctx context.Context, l *measure.Lane, t *topology.Topology, mc scenarios.MutantCase) reports.CatchRow {
	var runs []reports.CatchRun
	for seed := int64(1); seed <= int64(c.Runs) && ctx.Err() == nil; seed++ {
		for _, control := range c.sides() {
			if ctx.Err() != nil {
				break
			}
			r := c.runOne(ctx, l, t, mc, control, seed)
			if ctx.Err() != nil {
				break // interrupted: a run cut short is not a figure
			}
			runs = append(runs, r)
			l.Progress(runLine(c.judged(mc), r))
		}
	}
	return Tally(c.judged(mc), runs)
}

// runOne runs one seed of the mutant (or its control) on a flushed server
// and checks its history.
func (c CatchRate) runOne(ctx context.Context, l *measure.Lane, t *topology.Topology, mc scenarios.MutantCase, control bool, seed int64) (r reports.CatchRun) {
	client := mc.Client
	if control {
		client = mc.Control
	}
	r = reports.CatchRun{Client: client, Control: control, Seed: seed}
	begin := time.Now()
	defer func() { r.Elapsed = reports.MillisOf(time.Since(begin)) }()
	fctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	_, err := t.Servers()[0].Do(fctx, "FLUSHALL")
	cancel()
	if err != nil {
		r.Error = fmt.Sprintf("flushall: %v", err)
		return r
	}
	s := mc.Run(client, seed, c.Duration)
	if c.Gate != nil {
		s = *c.Gate
		s.Client, s.Seed = client, seed
	}
	s.Server, s.Topology = t.Build.Name, t.Kind
	run, err := runCounted(c.Out, "", onTopology(ctx, t, s))
	if err != nil {
		r.Error = err.Error()
		return r
	}
	defer run.drop()
	r.Ops, r.Notes = run.ops(), run.outcome.Result.Notes
	c.judge(&r, mc, run.result(), run.outcome.History.Meta.Fenced)
	if r.Hit == control { // a mutant missed, or a control's false alarm
		name := fmt.Sprintf("%s-missed-seed%d.history.json", scenarios.SafeName(mc.Client), seed)
		if control {
			name = fmt.Sprintf("%s-control-%s-false-alarm-seed%d.history.json", scenarios.SafeName(mc.Client), scenarios.SafeName(client), seed)
		}
		r.History = run.keep(c.Out, name, l.Logf)
	}
	return r
}

// judge fills a run's failing checks, whether it hit the check the
// mutant breaks, and by how many findings.
func (c CatchRate) judge(r *reports.CatchRun, mc scenarios.MutantCase, result *checker.Result, fenced bool) {
	r.Failing, r.Unknown = Failing(result)
	mc = c.judged(mc)
	if c.Gate != nil {
		if err := checker.DefaultExpectation.Meets(result, fenced); err != nil && result.Class != checker.ClassUnknown {
			r.Failing = append(r.Failing, mc.Breaks)
		} else if err != nil {
			r.Unknown = append(r.Unknown, mc.Breaks)
		}
	}
	r.Hit = slices.Contains(r.Failing, mc.Breaks)
	if ch, ok := result.Check(mc.Breaks); ok {
		r.Findings = ch.Count
	} else if c.Gate != nil {
		for _, ch := range result.Checks { // the gate's margin: every failing check's findings
			if ch.Status == checker.Fail && ch.Name != checker.Resource {
				r.Findings += ch.Count
			}
		}
	}
}

// sides are the runs each seed makes: the mutant, and its control unless
// the default gate is measured.
func (c CatchRate) sides() []bool {
	if c.Gate != nil {
		return []bool{false}
	}
	return []bool{false, true}
}

// judged is the case as this measurement judges it: by the default
// expectation, over the gate's scenario, when the gate is measured.
func (c CatchRate) judged(mc scenarios.MutantCase) scenarios.MutantCase {
	if c.Gate != nil {
		mc.Breaks = string(checker.DefaultExpectation)
		mc.Scenario = *c.Gate
	}
	return mc
}

// values are the results' values, in plan order.
func values[R any](results []measure.Result[R]) []R {
	out := make([]R, len(results))
	for i, r := range results {
		out[i] = r.Value
	}
	return out
}
