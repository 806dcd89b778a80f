package harness

import (
	"context"
	"fmt"
	"io"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/lockcheck/lockcheck/checker"
	"github.com/lockcheck/lockcheck/reports"
	"github.com/lockcheck/lockcheck/scenarios"
	"github.com/lockcheck/lockcheck/scenarios/fault"
	"github.com/lockcheck/lockcheck/topology"
)

// CatchRate measures how often each mutant's randomized scenario catches
// it: the mutant and its control run over seeds 1..Runs, one after the
// other, on a standalone topology that is flushed between runs. It is a
// measurement (issue 10): the suite's gating specs are scripted, and a
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
	lanes := min(max(c.Parallel, 1), len(c.Cases))
	begin := time.Now()
	load := LoadAverage()
	topos := make([]*topology.Topology, 0, lanes)
	defer func() {
		for _, t := range topos {
			if terr := Teardown(ctx, t); terr != nil && err == nil {
				err = terr
			}
		}
	}()
	// a mutant caught through a network fault needs its clients' links
	// proxied; the lanes are shared, so every case then runs through
	// proxies
	proxy := false
	for _, mc := range c.Cases {
		proxy = proxy || (c.Gate == nil && fault.NeedsClientProxy(mc.Scenario.Faults))
	}
	for range lanes {
		t, err := topology.Start(ctx, eng, c.Build, topology.Standalone, topology.WithOptions(topology.Options{ProxyClients: proxy}), topology.WithSources(c.Sources), topology.WithLog(c.Log))
		if err != nil {
			return nil, err
		}
		topos = append(topos, t)
	}
	t0 := topos[0]
	cr = &reports.CatchRate{Server: t0.Build.Name, Version: t0.Version, Topology: string(t0.Kind), Runs: c.Runs, Started: begin}
	if c.Gate != nil {
		cr.Gate = c.Gate.WithDefaults().Summary()
	}
	rows := make([]*reports.CatchRow, len(c.Cases))
	var mu sync.Mutex // guards rows, cr, n and the report's files
	finish := func() error {
		cr.Rows = cr.Rows[:0]
		for _, r := range rows {
			if r != nil {
				cr.Rows = append(cr.Rows, *r)
			}
		}
		cr.Elapsed = reports.MillisOf(time.Since(begin))
		cr.Machine = fmt.Sprintf("%d CPUs, %d topologies at once, load average %s at the start, %s at the end", runtime.NumCPU(), lanes, load, LoadAverage())
		return reports.WriteCatchRate(c.Out, cr)
	}
	total := len(c.Cases) * c.Runs * len(c.sides())
	n := 0
	next := make(chan int, len(c.Cases))
	for i := range c.Cases {
		next <- i
	}
	close(next)
	var werr error
	var wg sync.WaitGroup
	for _, t := range topos {
		wg.Go(func() {
			for i := range next {
				mc := c.Cases[i]
				var runs []reports.CatchRun
				for seed := int64(1); seed <= int64(c.Runs) && ctx.Err() == nil; seed++ {
					for _, control := range c.sides() {
						if ctx.Err() != nil {
							break
						}
						r := c.runOne(ctx, t, mc, control, seed)
						if ctx.Err() != nil {
							break // interrupted: a run cut short is not a figure
						}
						runs = append(runs, r)
						mu.Lock()
						n++
						fmt.Fprintf(c.Log, "[%d/%d] %s\n", n, total, runLine(c.judged(mc), r))
						mu.Unlock()
					}
				}
				row := Tally(c.judged(mc), runs)
				mu.Lock()
				rows[i] = &row
				if err := finish(); err != nil && werr == nil {
					werr = err
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if werr != nil {
		return cr, werr
	}
	cr.Complete = ctx.Err() == nil
	return cr, finish()
}

// runOne runs one seed of the mutant (or its control) on a flushed server
// and checks its history.
func (c CatchRate) runOne(ctx context.Context, t *topology.Topology, mc scenarios.MutantCase, control bool, seed int64) (r reports.CatchRun) {
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
	res, result, err := runMeasured(ctx, t, scenarios.Chaos{Workload: scenarios.Workload{Scenario: s}})
	if res != nil {
		r.Ops, r.Notes = len(res.History.Ops), res.Notes
	}
	if err != nil {
		r.Error = err.Error()
		return r
	}
	h := res.History
	r.Failing, r.Unknown = Failing(result)
	mc = c.judged(mc)
	if c.Gate != nil {
		if err := checker.DefaultExpectation.Meets(result, h.Meta.Fenced); err != nil && result.Class != checker.ClassUnknown {
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
	if r.Hit == control { // a mutant missed, or a control's false alarm
		name := fmt.Sprintf("%s-missed-seed%d.history.json", SafeName(mc.Client), seed)
		if control {
			name = fmt.Sprintf("%s-control-%s-false-alarm-seed%d.history.json", SafeName(mc.Client), SafeName(client), seed)
		}
		r.History = keepHistory(c.Out, name, h, c.Log)
	}
	return r
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

// Failing lists the checks of a result that failed and those that could
// not decide, in the result's order.
func Failing(res *checker.Result) (failing, unknown []string) {
	for _, ch := range res.Checks {
		switch ch.Status {
		case checker.Fail:
			failing = append(failing, ch.Name)
		case checker.Unknown:
			unknown = append(unknown, ch.Name)
		}
	}
	return failing, unknown
}

// Tally sums one mutant's runs and its control's into a row. A mutant run
// catches the mutant when the case's check failed; a control run is a false
// alarm when that same check failed. Every other failing check is counted
// beside, not as a catch or an alarm.
func Tally(mc scenarios.MutantCase, runs []reports.CatchRun) reports.CatchRow {
	row := reports.CatchRow{Mutant: mc.Client, Breaks: mc.Breaks, Why: mc.Why, Control: mc.Control, Scenario: mc.Summary(),
		CaughtBy: map[string]int{}, ControlFailing: map[string]int{}, Details: runs}
	for _, r := range runs {
		hit := slices.Contains(r.Failing, mc.Breaks)
		switch {
		case r.Error != "":
			row.Errors++
		case r.Control:
			row.ControlRuns++
			if hit {
				row.FalseAlarms++
			}
			for _, f := range r.Failing {
				if f != mc.Breaks {
					row.ControlFailing[f]++
				}
			}
		default:
			row.MutantRuns++
			if hit {
				row.Caught++
			} else if slices.Contains(r.Unknown, mc.Breaks) {
				row.Undecided++
			}
			for _, f := range r.Failing {
				row.CaughtBy[f]++
			}
		}
	}
	return row
}

// runLine is one run's progress line.
func runLine(mc scenarios.MutantCase, r reports.CatchRun) string {
	who := r.Client
	if r.Control {
		who += " (control of " + mc.Client + ")"
	}
	var what string
	switch {
	case r.Error != "":
		what = "error: " + r.Error
	case r.Control && r.Hit:
		what = fmt.Sprintf("FALSE ALARM of %s (%d findings)", mc.Breaks, r.Findings)
	case r.Control:
		what = "no false alarm of " + mc.Breaks
	case r.Hit:
		what = fmt.Sprintf("caught by %s (%d findings)", mc.Breaks, r.Findings)
	default:
		what = "NOT caught by " + mc.Breaks
	}
	failing := "none"
	if len(r.Failing) > 0 {
		failing = strings.Join(r.Failing, ", ")
	}
	line := fmt.Sprintf("%s seed %d: %s; failing: %s", who, r.Seed, what, failing)
	if len(r.Unknown) > 0 {
		line += "; undecided: " + strings.Join(r.Unknown, ", ")
	}
	return line + fmt.Sprintf("; %d ops, %s", r.Ops, (time.Duration(r.Elapsed)*time.Millisecond).Round(100*time.Millisecond))
}

// LoadAverage is the 1-minute load average, or "unknown" off Linux.
func LoadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	if f := strings.Fields(string(b)); len(f) > 0 {
		return f[0]
	}
	return "unknown"
}
