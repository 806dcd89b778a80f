package harness

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/lockcheck/lockcheck/checker"
	"github.com/lockcheck/lockcheck/reports"
	"github.com/lockcheck/lockcheck/scenarios"
	"github.com/lockcheck/lockcheck/topology"
)

// ExecuteTrace is the one way a trace runs, as Execute is a scenario's:
// it writes trace.json, starts the trace's topology, plays the trace,
// checks the history and writes the run's folder (history.json,
// result.json, report.html...; lockcheck replay OUT plays the trace
// again), and tears the topology down, also after Ctrl-C or an error.
func ExecuteTrace(ctx context.Context, eng *topology.Engine, tr scenarios.Trace, o Options) (*Outcome, error) {
	if err := tr.Validate(); err != nil {
		return nil, err
	}
	s := tr.Scenario.WithDefaults()
	if o.Out == "" {
		o.Out = DefaultOut(s) + "-trace"
	}
	if o.Log == nil {
		o.Log = io.Discard
	}
	if err := os.MkdirAll(o.Out, 0o755); err != nil {
		return nil, fmt.Errorf("output folder: %w", err)
	}
	if err := tr.Save(filepath.Join(o.Out, scenarios.TraceFileName)); err != nil {
		return nil, err
	}
	return onTopology(ctx, eng, s, o, func(t *topology.Topology) (*Outcome, error) { return playOn(ctx, t, tr, s, o) })
}

// playOn plays tr on t, checks what it recorded and writes the run's
// files into o.Out.
func playOn(ctx context.Context, t *topology.Topology, tr scenarios.Trace, s scenarios.Scenario, o Options) (*Outcome, error) {
	logFile, err := os.OpenFile(filepath.Join(o.Out, "run.log"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return nil, fmt.Errorf("run log: %w", err)
	}
	defer logFile.Close()
	h, err := tr.Play(ctx, t, slog.New(slog.NewTextHandler(logFile, nil)))
	wctx := context.WithoutCancel(ctx)
	if lerr := t.SaveLogs(wctx, filepath.Join(o.Out, "nodes")); lerr != nil {
		fmt.Fprintf(logFile, "node logs: %v\n", lerr)
	}
	if err != nil {
		if ctx.Err() != nil {
			return &Outcome{Out: o.Out, Interrupted: true}, nil
		}
		return nil, err
	}
	if h.Scenario, err = json.Marshal(s); err != nil {
		return nil, err
	}
	if err := h.Save(filepath.Join(o.Out, "history.json")); err != nil {
		return nil, err
	}
	result, err := checker.Run(wctx, h, CheckOptions(h, s))
	if err != nil {
		return nil, fmt.Errorf("check: %w", err)
	}
	rr := reports.NewRunResult(h, result, nil)
	rr.Replay = o.replay()
	if err := WriteFiles(o.Out, h, result, rr); err != nil {
		return nil, err
	}
	return &Outcome{Out: o.Out, History: h, Check: result, Result: rr, Interrupted: ctx.Err() != nil}, nil
}
