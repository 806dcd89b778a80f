package harness

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"time"

	"github.com/lockcheck/lockcheck/scenarios"
	"github.com/lockcheck/lockcheck/topology"
)

// Execute is the one way a scenario runs: it writes scenario.json, starts
// the scenario's topology (obtaining every build's image), runs the
// workload and its faults, checks the history, writes the run's folder
// and tears the topology down, also after Ctrl-C (ctx ended: the history
// so far is checked and written, and the outcome says it is partial) and
// after an error. The CLI, the matrix, the shrinker, the suites and bench
// all run through it; ExecuteOn and ExecuteTrace are its two doors for a
// topology the caller started and for a trace.
func Execute(ctx context.Context, eng *topology.Engine, s scenarios.Scenario, o Options) (*Outcome, error) {
	j, err := scenarioJob(s)
	if err != nil {
		return nil, err
	}
	return execute(ctx, eng, j, o)
}

// ExecuteTrace runs a trace as Execute runs a scenario: it writes
// trace.json, starts the trace's topology, plays the trace, checks the
// history and writes the run's folder (lockcheck replay OUT plays the
// trace again), and tears the topology down, also after Ctrl-C or an
// error.
func ExecuteTrace(ctx context.Context, eng *topology.Engine, tr scenarios.Trace, o Options) (*Outcome, error) {
	j, err := newTraceJob(tr)
	if err != nil {
		return nil, err
	}
	return execute(ctx, eng, j, o)
}

// ExecuteOn runs s on t, which its caller started for s and tears down: a
// suite, a measurement or a library's test reuses one topology across
// runs. It writes scenario.json when Execute has not.
func ExecuteOn(ctx context.Context, t *topology.Topology, s scenarios.Scenario, o Options) (*Outcome, error) {
	j, err := scenarioJob(s)
	if err != nil {
		return nil, err
	}
	o = o.settled(j)
	if err := j.save(o, false); err != nil {
		return nil, err
	}
	return run(ctx, t, j, o)
}

// execute writes the job's input into its folder, starts its topology,
// runs it there and tears the topology down, also after Ctrl-C (ctx
// ended) or an error.
func execute(ctx context.Context, eng *topology.Engine, j job, o Options) (out *Outcome, err error) {
	o = o.settled(j)
	if err := j.save(o, true); err != nil {
		return nil, err
	}
	t, err := StartScenario(ctx, eng, j.scenario, o.Sources, o.Log)
	if err != nil {
		return nil, fmt.Errorf("topology did not start: %w", err)
	}
	defer func() {
		if terr := Teardown(ctx, t); terr != nil && err == nil {
			err = terr
		}
	}()
	return run(ctx, t, j, o)
}

// DefaultOut is the folder a run of s writes to when none is given; s is
// a resolved Scenario (scenarios.Scenario.Resolve).
func DefaultOut(s scenarios.Scenario) string {
	return filepath.Join("runs", fmt.Sprintf("%s-%s-%s-%s-%d", time.Now().Format("20060102-150405"), s.Server, s.Topology, SafeName(s.Client), s.Seed))
}

// ReplayCommand is the command that runs a folder's scenario again.
func ReplayCommand(dir string) string { return "lockcheck replay " + quoteArg(dir) }

// settled fills what o leaves to the run path: the folder, the log.
func (o Options) settled(j job) Options {
	if o.Out == "" {
		o.Out = DefaultOut(j.scenario) + j.suffix
	}
	if o.Log == nil {
		o.Log = io.Discard
	}
	return o
}
