package harness

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/lockcheck/lockcheck/checker"
	"github.com/lockcheck/lockcheck/history"
	"github.com/lockcheck/lockcheck/reports"
	"github.com/lockcheck/lockcheck/scenarios"
	"github.com/lockcheck/lockcheck/scenarios/lockclient"
	"github.com/lockcheck/lockcheck/topology"
)

// run plays j on t, which was started for it, checks what it recorded and
// writes the run's files: the part of the run path every door shares.
// The check and the files are made after Ctrl-C too: the history so far
// is the run's answer.
func run(ctx context.Context, t *topology.Topology, j job, o Options) (*Outcome, error) {
	s := j.scenario
	if t.Build.Name != s.Server || t.Kind != s.Topology {
		return nil, fmt.Errorf("scenario %s runs on %s %s, not on the %s %s started", s.Name(), s.Server, s.Topology, t.Build.Name, t.Kind)
	}
	log, closeLog, err := runLog(o)
	if err != nil {
		return nil, err
	}
	defer closeLog()
	p, err := j.play(ctx, t, o, log)
	wctx := context.WithoutCancel(ctx)
	if lerr := t.SaveLogs(wctx, filepath.Join(o.Out, "nodes")); lerr != nil {
		log.Warn("node logs", "err", lerr)
	}
	if err != nil {
		return nil, err
	}
	out := &Outcome{Out: o.Out, Schedule: p.schedule, Notes: p.notes, Interrupted: ctx.Err() != nil || p.interrupted, Stopped: p.stopped}
	if p.interrupted {
		return out, nil
	}
	return out, record(wctx, s, p, o, out)
}

// record makes history.json (from the stream, a line at a time: the run's
// operations are never all in memory), checks it from the file a group of
// keys at a time, and writes result.json and the reports.
func record(ctx context.Context, s scenarios.Scenario, p *played, o Options, out *Outcome) error {
	head := p.h
	head.Format = history.Format
	var err error
	if head.Scenario, err = json.Marshal(s); err != nil {
		return err
	}
	path := filepath.Join(o.Out, "history.json")
	if p.stream != "" {
		if _, err := history.SaveStream(p.stream, path, head); err != nil {
			return err
		}
		os.Remove(p.stream) // history.json has it all
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
	if p.stopped {
		out.Notes = append(out.Notes, fmt.Sprintf("stopped at %s of %s: the live check found a violation (--stop-on-violation)",
			time.Duration(h.Meta.DurationNs).Round(time.Second), s.Duration))
	}
	rr := reports.NewRunResult(h, result, out.Notes)
	rr.Replay = o.replay()
	out.History, out.Check, out.Result = h, result, rr
	if o.Counted {
		return rr.Save(filepath.Join(o.Out, "result.json"))
	}
	return reports.WriteRun(o.Out, h, result, rr)
}

// runLog opens the run's run.log.
func runLog(o Options) (*slog.Logger, func(), error) {
	f, err := os.OpenFile(filepath.Join(o.Out, "run.log"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return nil, nil, fmt.Errorf("run log: %w", err)
	}
	return slog.New(slog.NewTextHandler(f, nil)), func() { f.Close() }, nil
}

// runMeta is the history's meta as the run knows it before it starts.
func runMeta(t *topology.Topology, s scenarios.Scenario) history.Meta {
	return history.Meta{Server: t.Build.Name, Version: t.Version, Topology: string(t.Kind), Client: s.Client, Seed: s.Seed,
		TTLms: s.TTL.Milliseconds(), Clients: s.Clients, Keys: s.Keys, Fenced: s.Fenced || lockclient.DrawsFences(s.Client), Faults: s.Faults}
}

// CheckOptions are the checker's options for a run of s: the checker's
// own for the history, with the scenario's clock tolerance; s is
// resolved.
func CheckOptions(h *history.History, s scenarios.Scenario) checker.Options {
	opts := checker.OptionsFor(h)
	opts.ClockTolerance = s.ClockTolerance
	return opts
}
