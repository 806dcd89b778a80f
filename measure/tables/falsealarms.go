package tables

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/lockcheck/lockcheck/checker"
	"github.com/lockcheck/lockcheck/harness"
	"github.com/lockcheck/lockcheck/measure"
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
	// Shard is the part of the rows this measurement makes (all when
	// zero); lockcheck merge joins the shards' folders.
	Shard   measure.Shard
	Sources topology.Sources
	// Out receives false-alarms.md, false-alarms.json and the history of
	// every run that raised one.
	Out string
	Log io.Writer
	// Earlier is the table an interrupted measurement of the same plan
	// left in Out (ReadEarlier): its rows are not measured again.
	Earlier *reports.FalseAlarms
}

// done is what f.Earlier measured, checked against f's plan and shard (a
// row cut short, or with runs that did not run, is measured again), and
// the span the table goes on with.
func (f FalseAlarms) done() (*measure.Done[reports.AlarmRow], span, error) {
	e := f.Earlier
	if e == nil {
		return nil, newSpan(time.Time{}, 0, ""), nil
	}
	if e.Runs != f.Runs || e.Duration != reports.MillisOf(f.Scenario(&topology.Topology{}, "", 0).Duration) || !sameShard(e.Part, f.Shard) {
		return nil, span{}, fmt.Errorf("%s holds false alarms of %d seeds of %s, %s: resume it with the same --runs, --duration and --shard", f.Out, e.Runs, e.Duration, partName(e.Part))
	}
	whole := func(r reports.AlarmRow) bool { return r.Errors == 0 && r.Runs == f.Runs }
	done, err := doneOf(f.plan(), f.Shard, e.Rows, func(r reports.AlarmRow) string { return fmt.Sprintf("%s on %s %s", r.Client, r.Server, r.Topology) }, whole, f.Out)
	return done, newSpan(e.Started, e.Elapsed, e.Machine), err
}

// CheckEarlier says, before anything starts, whether f can go on from
// f.Earlier.
func (f FalseAlarms) CheckEarlier() error {
	_, _, err := f.done()
	return err
}

// alarmItem is one row: a client on a build and topology kind, in the
// lane (one topology) of its build, kind and slot.
type alarmItem struct {
	AlarmCase
	kind topology.Kind
	slot int
}

func (a alarmItem) key() string { return fmt.Sprintf("%s on %s %s", a.Client, a.Build.Name, a.kind) }

// plan is one item per client and kind; each build and kind's clients go
// round-robin to up to Parallel lanes of their own.
func (f FalseAlarms) plan() measure.Plan[alarmItem] {
	var items []alarmItem
	per := max(f.Parallel, 1)
	for _, kind := range f.Topologies {
		seen := map[string]int{}
		for _, c := range f.Cases {
			items = append(items, alarmItem{AlarmCase: c, kind: kind, slot: seen[c.Build.Name] % per})
			seen[c.Build.Name]++
		}
	}
	return measure.Plan[alarmItem]{Items: items, Key: alarmItem.key,
		Lane:  func(a alarmItem) string { return fmt.Sprintf("%s %s %d", a.Build.Name, a.kind, a.slot) },
		Steps: func(alarmItem) int { return f.Runs }}
}

// Measure starts one topology per lane, runs every case's seeds on it and
// tears every topology down on every path. After Ctrl-C it returns the
// partial figures, written too.
func (f FalseAlarms) Measure(ctx context.Context, eng *topology.Engine) (*reports.FalseAlarms, error) {
	if f.Log == nil {
		f.Log = io.Discard
	}
	if f.Runs <= 0 || f.Duration < 0 {
		return nil, fmt.Errorf("false-alarms: runs must be positive")
	}
	if err := os.MkdirAll(f.Out, 0o755); err != nil {
		return nil, fmt.Errorf("false-alarms folder: %w", err)
	}
	done, sp, err := f.done()
	if err != nil {
		return nil, err
	}
	fa := &reports.FalseAlarms{Runs: f.Runs, Duration: reports.MillisOf(f.Scenario(&topology.Topology{}, "", 0).Duration), Checks: AlarmChecks, Started: sp.begin}
	runner := measure.Runner{Shard: f.Shard, Log: f.Log, Unit: "topologies"}
	_, err = measure.Resume(ctx, runner, f.plan(), done, func(ctx context.Context, l *measure.Lane, it alarmItem) (reports.AlarmRow, error) {
		return f.measureRow(ctx, eng, l, it)
	}, func(s *measure.Snapshot[reports.AlarmRow]) error {
		fa.Rows = values(s.Results)
		reports.SortAlarmRows(fa.Rows)
		fa.Elapsed, fa.Machine, fa.Complete, fa.Part = sp.elapsed(), sp.machine(s.Machine), s.Complete, s.Part
		return reports.WriteFalseAlarms(f.Out, fa)
	})
	return fa, err
}

// measureRow runs one client's seeds on its lane's topology, which the
// lane's first row starts and its last tears down.
func (f FalseAlarms) measureRow(ctx context.Context, eng *topology.Engine, l *measure.Lane, it alarmItem) (reports.AlarmRow, error) {
	if l.Value == nil {
		t, err := topology.Start(ctx, eng, it.Build, it.kind, topology.WithSources(f.Sources), topology.WithLog(f.Log))
		if err != nil {
			return reports.AlarmRow{}, fmt.Errorf("%s %s: %w", it.Build.Name, it.kind, err)
		}
		l.Value = t
		l.OnClose(func() error { return harness.Teardown(ctx, t) })
	}
	t := l.Value.(*topology.Topology)
	row := reports.AlarmRow{Client: it.Client, Server: t.Build.Name, Version: t.Version, Topology: string(t.Kind), Failing: map[string]int{}}
	for seed := int64(1); seed <= int64(f.Runs) && ctx.Err() == nil; seed++ {
		r := f.runOne(ctx, l, t, it.Client, seed)
		if ctx.Err() != nil {
			break // interrupted: a run cut short is not a figure
		}
		row.Add(r)
		l.Progress(r.Line())
	}
	return row, nil
}

// runOne runs one seed of client's default workload on a flushed server.
func (f FalseAlarms) runOne(ctx context.Context, l *measure.Lane, t *topology.Topology, client string, seed int64) (r reports.AlarmRun) {
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
	run, err := runCounted(f.Out, stderr, onTopology(ctx, t, f.Scenario(t, client, seed)))
	if err != nil {
		r.Error = err.Error()
		return r
	}
	defer run.drop()
	r.Ops = run.ops()
	r.Failing, r.Unknown = Failing(run.result())
	for _, name := range AlarmChecks {
		if slices.Contains(r.Failing, name) {
			r.Alarms = append(r.Alarms, name)
		}
	}
	if len(r.Alarms) > 0 {
		name := fmt.Sprintf("%s-%s-%s-seed%d.history.json", scenarios.SafeName(client), t.Build.Name, t.Kind, seed)
		r.History = run.keep(f.Out, name, l.Logf)
	}
	return r
}

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
