package harness

import (
	"context"
	"encoding/json"
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

// run is the run path's second half, on a started topology: the job
// played (a workload streamed to ops.jsonl as it goes, watched by the
// progress line and the live count), the nodes' logs saved, then record.
// The check and the files are made after Ctrl-C too: the history so far
// is the run's answer.
func run(ctx context.Context, t *topology.Topology, j scenarios.Job, o Options) (*Outcome, error) {
	logFile, err := os.OpenFile(filepath.Join(o.Out, "run.log"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return nil, fmt.Errorf("run log: %w", err)
	}
	defer logFile.Close()
	log := slog.New(slog.NewTextHandler(logFile, nil))
	rec, ttl, fenced := history.NewRecorder(), j.Scenario.TTL, j.Meta(t).Fenced
	var injected atomic.Int64
	stopProgress := reports.ProgressLine(ctx, o.Progress, rec, &injected, ttl, fenced)
	runCtx, stopRun := context.WithCancel(ctx)
	defer stopRun()
	var stopped atomic.Bool
	stopWatch := func() {}
	if o.StopOnViolation {
		stopWatch = checker.StopOnViolation(runCtx, rec, ttl, fenced, func(n int) {
			log.Info("stopping the run: the live check found a violation", "violations", n, "after", time.Duration(rec.Now()))
			stopped.Store(true)
			stopRun()
		})
	}
	p := scenarios.Play{Recorder: rec, Log: log, StderrDir: o.StderrDir, Configure: o.Configure, Injected: func(fault.Event, error) { injected.Add(1) }}
	if j.Trace == nil {
		p.Stream = filepath.Join(o.Out, history.StreamName)
	}
	res, err := j.Play(runCtx, t, p)
	stopWatch()
	stopProgress()
	if lerr := t.SaveLogs(context.WithoutCancel(ctx), filepath.Join(o.Out, "nodes")); lerr != nil {
		log.Warn("node logs", "err", lerr)
	}
	if err != nil && j.Trace != nil && ctx.Err() != nil {
		return &Outcome{Out: o.Out, Interrupted: true}, nil
	}
	if err != nil {
		return nil, err
	}
	out := &Outcome{Out: o.Out, Schedule: res.Schedule, Notes: res.Notes, Interrupted: ctx.Err() != nil, Stopped: stopped.Load()}
	return out, record(context.WithoutCancel(ctx), j.Scenario, res.History, p.Stream, o, out)
}

// record makes history.json (from the stream, a line at a time: the run's
// operations are never all in memory), checks it from the file a group of
// keys at a time, and writes result.json and the reports (only
// result.json for a counted run).
func record(ctx context.Context, s scenarios.Scenario, head *history.History, stream string, o Options, out *Outcome) error {
	head.Format = history.Format
	var err error
	if head.Scenario, err = json.Marshal(s); err != nil {
		return err
	}
	path := filepath.Join(o.Out, "history.json")
	if stream != "" {
		if _, err := history.SaveStream(stream, path, head); err != nil {
			return err
		}
		os.Remove(stream) // history.json has it all
	} else if err := head.Save(path); err != nil {
		return err
	}
	result, h, err := checker.RunFile(ctx, path, func(opts *checker.Options) {
		opts.ClockTolerance = s.ClockTolerance
		if o.Counted {
			opts.PictureOps = -1
		}
	})
	if err != nil {
		return fmt.Errorf("check: %w", err)
	}
	if out.Stopped {
		out.Notes = append(out.Notes, fmt.Sprintf("stopped at %s of %s: the live check found a violation (--stop-on-violation)",
			time.Duration(h.Meta.DurationNs).Round(time.Second), s.Duration))
	}
	rr := reports.NewRunResult(h, result, out.Notes)
	rr.Replay = o.Replay
	out.History, out.Check, out.Result = h, result, rr
	if o.Counted {
		return rr.Save(filepath.Join(o.Out, "result.json"))
	}
	return reports.WriteRun(o.Out, h, result, rr)
}

// CheckOptions are the checker's options for a run of s: the checker's
// own for the history, with the scenario's clock tolerance; s is
// resolved.
func CheckOptions(h *history.History, s scenarios.Scenario) checker.Options {
	opts := checker.OptionsFor(h)
	opts.ClockTolerance = s.ClockTolerance
	return opts
}
