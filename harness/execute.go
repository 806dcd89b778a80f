package harness

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"time"

	"github.com/lockcheck/lockcheck/scenarios"
	"github.com/lockcheck/lockcheck/topology"
)

// Execute is the one way a scenario runs: it writes scenario.json, starts
// the scenario's topology (obtaining every build's image), runs the
// workload and its faults, checks the history, writes the run's folder
// and tears the topology down, also after Ctrl-C (ctx ended: the history
// so far is checked and written, and the outcome says it is partial) and
// after an error. The CLI, the matrix, the measurements, the shrinker, the
// suites and bench all run through it; ExecuteOn and ExecuteTrace are its
// two doors for a topology the caller started and for a trace.
func Execute(ctx context.Context, eng *topology.Engine, s scenarios.Scenario, o Options) (*Outcome, error) {
	return execute(ctx, eng, nil, scenarios.Job{Scenario: s}, o)
}

// ExecuteTrace runs a trace as Execute runs a scenario: it writes
// trace.json, starts the trace's topology, plays the trace, checks the
// history and writes the run's folder (lockcheck replay OUT plays the
// trace again), and tears the topology down, also after Ctrl-C or an
// error.
func ExecuteTrace(ctx context.Context, eng *topology.Engine, tr scenarios.Trace, o Options) (*Outcome, error) {
	return execute(ctx, eng, nil, scenarios.Job{Trace: &tr}, o)
}

// ExecuteOn runs s on t, which its caller started for s and tears down: a
// suite, a measurement or a library's test reuses one topology across
// runs. It writes scenario.json when Execute has not.
func ExecuteOn(ctx context.Context, t *topology.Topology, s scenarios.Scenario, o Options) (*Outcome, error) {
	return execute(ctx, nil, t, scenarios.Job{Scenario: s}, o)
}

// execute is the run path's first half: the job resolved once, its folder
// and input file, and, unless the caller gave one (t), its topology,
// started here and torn down also after Ctrl-C (ctx ended) or an error.
// Each step is one call down into the layer that knows it; run is the
// second half.
func execute(ctx context.Context, eng *topology.Engine, t *topology.Topology, j scenarios.Job, o Options) (out *Outcome, err error) {
	if j, err = j.Resolve(); err != nil {
		return nil, err
	}
	s := j.Scenario
	if t != nil && (t.Build.Name != s.Server || t.Kind != s.Topology) {
		return nil, fmt.Errorf("scenario %s runs on %s %s, not on the %s %s started", s.Name(), s.Server, s.Topology, t.Build.Name, t.Kind)
	}
	o.Out = cmp.Or(o.Out, j.Folder(time.Now()))
	o.Replay = cmp.Or(o.Replay, scenarios.ReplayCommand(o.Out))
	o.StderrDir = cmp.Or(o.StderrDir, o.Out)
	o.Log = cmp.Or[io.Writer](o.Log, io.Discard)
	if err := j.Save(o.Out, o.Replay, t != nil); err != nil {
		return nil, err
	}
	if t == nil {
		b, opts, err := s.Servers(o.Sources)
		if err == nil {
			t, err = topology.Start(ctx, eng, b, s.Topology, append(opts, topology.WithLog(o.Log))...)
		}
		if err != nil {
			return nil, fmt.Errorf("topology did not start: %w", err)
		}
		defer func() { err = cmp.Or(err, Teardown(ctx, t)) }()
	}
	return run(ctx, t, j, o)
}
