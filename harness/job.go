package harness

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync/atomic"
	"time"

	"github.com/lockcheck/lockcheck/checker"
	"github.com/lockcheck/lockcheck/history"
	"github.com/lockcheck/lockcheck/reports"
	"github.com/lockcheck/lockcheck/scenarios"
	"github.com/lockcheck/lockcheck/scenarios/fault"
	"github.com/lockcheck/lockcheck/topology"
)

// job is what a run plays on its topology: a Scenario's workload and its
// faults, or a Trace's few steps (a shrink's reproducer). Everything else
// on the run path (the folder, the topology, the check, the files) is the
// same for both.
type job struct {
	// scenario is resolved: defaults applied and validated, once, here.
	scenario scenarios.Scenario
	// trace, when set, is played instead of the scenario's workload.
	trace *scenarios.Trace
	// suffix ends the default folder's name.
	suffix string
}

func scenarioJob(s scenarios.Scenario) (job, error) {
	s, err := s.Resolve()
	return job{scenario: s}, err
}

func newTraceJob(tr scenarios.Trace) (job, error) {
	if err := tr.Validate(); err != nil {
		return job{}, err
	}
	s, err := tr.Scenario.Resolve()
	return job{scenario: s, trace: &tr, suffix: "-trace"}, err
}

// save writes the job's input into its folder: trace.json for a trace,
// scenario.json (with the schedule the seed gives and the command that
// replays it) for a scenario, unless a folder that has one is reused
// (again false: a caller wrote it).
func (j job) save(o Options, again bool) error {
	if err := os.MkdirAll(o.Out, 0o755); err != nil {
		return fmt.Errorf("output folder: %w", err)
	}
	if j.trace != nil {
		return j.trace.Save(filepath.Join(o.Out, scenarios.TraceFileName))
	}
	path := filepath.Join(o.Out, scenarios.RunFileName)
	if _, err := os.Stat(path); err == nil && !again {
		return nil
	}
	events, err := j.scenario.Schedule()
	if err != nil {
		return err
	}
	f := scenarios.RunFile{Format: scenarios.RunFileFormat, Scenario: j.scenario, Schedule: events, Replay: o.replay()}
	return f.Save(path)
}

// played is what a job recorded on its topology.
type played struct {
	// h is the history: whole (a trace's), or its head when stream holds
	// the operations (ops.jsonl, a workload's).
	h        *history.History
	stream   string
	schedule []fault.Event
	notes    []string
	// interrupted: ctx ended before the trace was played; nothing to
	// check.
	interrupted bool
	stopped     bool
}

// play drives the job on t.
func (j job) play(ctx context.Context, t *topology.Topology, o Options, log *slog.Logger) (*played, error) {
	if j.trace != nil {
		h, err := j.trace.Play(ctx, t, log)
		if err != nil && ctx.Err() != nil {
			return &played{interrupted: true}, nil
		}
		return &played{h: h}, err
	}
	return j.workload(ctx, t, o, log)
}

// workload runs the scenario's workload and faults on t, watched by the
// progress line and the live count. Every operation goes to ops.jsonl as
// it returns: a run killed before history.json is written
// leaves what it had (lockcheck check DIR).
func (j job) workload(ctx context.Context, t *topology.Topology, o Options, log *slog.Logger) (*played, error) {
	s := j.scenario
	rec := history.NewRecorder()
	p := &played{stream: filepath.Join(o.Out, history.StreamName)}
	if err := rec.StreamTo(p.stream, runMeta(t, s)); err != nil {
		return nil, err
	}
	defer rec.CloseStream()
	var injected atomic.Int64
	chaos := scenarios.Chaos{
		Workload:  scenarios.Workload{Scenario: s, Recorder: rec, Log: log},
		StderrDir: o.stderrDir(),
		Log:       log,
		Injected:  func(fault.Event, error) { injected.Add(1) },
		Configure: o.Configure,
	}
	fenced := runMeta(t, s).Fenced
	stopProgress, stopWatch := func() {}, func() {}
	if o.Progress != nil {
		stopProgress = reports.ProgressLine(ctx, o.Progress, rec, &injected, checker.NewLiveCount(rec, s.TTL, fenced))
	}
	runCtx, stopRun := context.WithCancel(ctx)
	defer stopRun()
	var stopped atomic.Bool
	if o.StopOnViolation {
		stopWatch = checker.StopOnViolation(runCtx, rec, s.TTL, fenced, func(n int) {
			log.Info("stopping the run: the live check found a violation", "violations", n, "after", time.Duration(rec.Now()))
			stopped.Store(true)
			stopRun()
		})
	}
	res, err := chaos.Run(runCtx, t)
	stopWatch()
	stopProgress()
	if err != nil {
		return nil, err
	}
	p.h, p.schedule, p.notes, p.stopped = res.History, res.Schedule, res.Notes, stopped.Load()
	return p, rec.CloseStream()
}
