package harness

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sync"
	"time"

	"github.com/lockcheck/lockcheck/checker"
	"github.com/lockcheck/lockcheck/reports"
	"github.com/lockcheck/lockcheck/scenarios"
	"github.com/lockcheck/lockcheck/topology"
)

// AlarmChecks are the checks a correct client must pass in the default
// workload whatever it is: each is judged by the default expectation
// (lock-correct), so a double holder, a history no legal order explains,
// a key left without expiry or stuck, a refused command or a fence that
// let a stale write through is a false alarm, never the client's fault.
// The resource's lost increments of an unfenced client whose holder
// stalled (class stale-writes) are counted beside.
var AlarmChecks = []string{checker.DoubleHolder, checker.Linearizability, checker.TTL, checker.Rejected, checker.Fence}

// AlarmCase is one correct client on one build.
type AlarmCase struct {
	Client string
	Build  topology.Build
}

// FalseAlarms measures how often correct clients fail AlarmChecks in an
// adversarial workload (Scenario: stalls, pauses inside lock calls, late
// extends, the key observed), over seeds
// 1..Runs on each topology kind. One topology per build and kind, each on
// a lane of its own, flushed between runs. Like CatchRate it is a
// measurement, written for the README, not a test.
type FalseAlarms struct {
	Cases      []AlarmCase
	Topologies []topology.Kind
	Runs       int
	// Duration is one run's length.
	Duration time.Duration
	// Base is the scenario every run makes (GateScenario when nil).
	Base *scenarios.Scenario
	// Parallel is how many topologies a build and kind's clients share
	// out among (1 when 0).
	Parallel int
	Sources  topology.Sources
	// Out receives false-alarms.md, false-alarms.json and the history of
	// every run that raised one.
	Out string
	Log io.Writer
}

// lane is the runs one topology makes.
type lane struct {
	build topology.Build
	kind  topology.Kind
	slot  int   // which of the build and kind's lanes
	cases []int // indexes into Cases
}

// Measure starts one topology per lane, runs every case's seeds on it and
// tears every topology down on every path. After Ctrl-C it returns the
// partial figures, written too.
func (f FalseAlarms) Measure(ctx context.Context, eng *topology.Engine) (fa *reports.FalseAlarms, err error) {
	if f.Log == nil {
		f.Log = io.Discard
	}
	if f.Runs <= 0 || f.Duration < 0 {
		return nil, fmt.Errorf("false-alarms: runs must be positive")
	}
	// each build and kind's clients go round-robin to up to Parallel
	// lanes of their own
	var lanes []lane
	per := max(f.Parallel, 1)
	for _, kind := range f.Topologies {
		seen := map[string]int{}
		for i, c := range f.Cases {
			n := seen[c.Build.Name]
			seen[c.Build.Name]++
			j := slices.IndexFunc(lanes, func(l lane) bool {
				return l.build.Name == c.Build.Name && l.kind == kind && l.slot == n%per
			})
			if j < 0 {
				lanes = append(lanes, lane{build: c.Build, kind: kind, slot: n % per})
				j = len(lanes) - 1
			}
			lanes[j].cases = append(lanes[j].cases, i)
		}
	}
	if err := os.MkdirAll(f.Out, 0o755); err != nil {
		return nil, fmt.Errorf("false-alarms folder: %w", err)
	}
	begin, load := time.Now(), LoadAverage()
	fa = &reports.FalseAlarms{Runs: f.Runs, Duration: reports.MillisOf(f.Scenario(&topology.Topology{}, "", 0).Duration), Checks: AlarmChecks, Started: begin}
	var mu sync.Mutex // guards fa, n and the report's files
	finish := func() error {
		fa.Elapsed = reports.MillisOf(time.Since(begin))
		fa.Machine = fmt.Sprintf("%d CPUs, %d topologies at once, load average %s at the start, %s at the end", runtime.NumCPU(), len(lanes), load, LoadAverage())
		return reports.WriteFalseAlarms(f.Out, fa)
	}
	total := len(f.Cases) * len(f.Topologies) * f.Runs
	n := 0
	var firstErr error
	var wg sync.WaitGroup
	for _, l := range lanes {
		wg.Go(func() {
			rows, err := f.runLane(ctx, eng, l, func(r reports.AlarmRun) {
				mu.Lock()
				defer mu.Unlock()
				n++
				fmt.Fprintf(f.Log, "[%d/%d] %s\n", n, total, r.Line())
			})
			mu.Lock()
			defer mu.Unlock()
			fa.Rows = append(fa.Rows, rows...)
			if err != nil && firstErr == nil {
				firstErr = err
			}
			if werr := finish(); werr != nil && firstErr == nil {
				firstErr = werr
			}
		})
	}
	wg.Wait()
	reports.SortAlarmRows(fa.Rows)
	fa.Complete = ctx.Err() == nil && firstErr == nil
	if werr := finish(); werr != nil && firstErr == nil {
		firstErr = werr
	}
	return fa, firstErr
}

// runLane starts the lane's topology and runs each of its cases' seeds.
func (f FalseAlarms) runLane(ctx context.Context, eng *topology.Engine, l lane, done func(reports.AlarmRun)) (rows []reports.AlarmRow, err error) {
	t, err := topology.Start(ctx, eng, l.build, l.kind, topology.WithSources(f.Sources), topology.WithLog(f.Log))
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", l.build.Name, l.kind, err)
	}
	defer func() {
		if terr := Teardown(ctx, t); terr != nil && err == nil {
			err = terr
		}
	}()
	for _, ci := range l.cases {
		c := f.Cases[ci]
		row := reports.AlarmRow{Client: c.Client, Server: t.Build.Name, Version: t.Version, Topology: string(t.Kind), Failing: map[string]int{}}
		for seed := int64(1); seed <= int64(f.Runs) && ctx.Err() == nil; seed++ {
			r := f.runOne(ctx, t, c.Client, seed)
			if ctx.Err() != nil {
				break // interrupted: a run cut short is not a figure
			}
			row.Add(r)
			done(r)
		}
		rows = append(rows, row)
	}
	return rows, nil
}

// runOne runs one seed of client's default workload on a flushed server.
func (f FalseAlarms) runOne(ctx context.Context, t *topology.Topology, client string, seed int64) (r reports.AlarmRun) {
	r = reports.AlarmRun{Client: client, Server: t.Build.Name, Topology: string(t.Kind), Seed: seed}
	begin := time.Now()
	defer func() { r.Elapsed = reports.MillisOf(time.Since(begin)) }()
	if err := flushPrimary(ctx, t); err != nil {
		r.Error = err.Error()
		return r
	}
	// adapters' stderr, one folder per topology: lanes run at once
	stderr := filepath.Join(f.Out, "adapters", fmt.Sprintf("%s-%s", t.Build.Name, t.Kind))
	if err := os.MkdirAll(stderr, 0o755); err != nil {
		r.Error = err.Error()
		return r
	}
	s := f.Scenario(t, client, seed)
	chaos := scenarios.Chaos{Workload: scenarios.Workload{Scenario: s}, StderrDir: stderr}
	res, result, err := runMeasured(ctx, t, chaos)
	if res != nil {
		r.Ops = len(res.History.Ops)
	}
	if err != nil {
		r.Error = err.Error()
		return r
	}
	h := res.History
	r.Failing, r.Unknown = Failing(result)
	for _, name := range AlarmChecks {
		if slices.Contains(r.Failing, name) {
			r.Alarms = append(r.Alarms, name)
		}
	}
	if len(r.Alarms) > 0 {
		name := fmt.Sprintf("%s-%s-%s-seed%d.history.json", SafeName(client), t.Build.Name, t.Kind, seed)
		r.History = keepHistory(f.Out, name, h, f.Log)
	}
	return r
}

// GateScenario is the default gate as the catch-rate and false-alarm
// tables measure it: the default workload (stalls, late holds and pauses
// inside lock calls on) with only its lease, workers, keys and length
// given, as a library's CI would give them.
var GateScenario = scenarios.Scenario{TrafficSettings: scenarios.TrafficSettings{TTL: 500 * time.Millisecond, Clients: 6, Keys: 1, Duration: 30 * time.Second}}

// Scenario is the workload one run makes: GateScenario with the lane's
// server and topology, the client, the seed and the length.
func (f FalseAlarms) Scenario(t *topology.Topology, client string, seed int64) scenarios.Scenario {
	s := GateScenario
	if f.Base != nil {
		s = *f.Base
	}
	s.Server, s.Topology, s.Client, s.Seed = t.Build.Name, t.Kind, client, seed
	if f.Duration > 0 {
		s.Duration = f.Duration
	}
	return s
}

// flushPrimary empties the topology's primary before a run, so that no
// key of the last run is read by the next.
func flushPrimary(ctx context.Context, t *topology.Topology) error {
	fctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	p, err := t.Primary(fctx, scenarios.LockKey(0))
	if err != nil {
		return fmt.Errorf("flushall: %w", err)
	}
	if _, err := p.Do(fctx, "FLUSHALL"); err != nil {
		return fmt.Errorf("flushall: %w", err)
	}
	return nil
}
