package scenarios

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/lockcheck/lockcheck/history"
	"github.com/lockcheck/lockcheck/scenarios/fault"
	"github.com/lockcheck/lockcheck/scenarios/lockclient"
	"github.com/lockcheck/lockcheck/topology"
)

// A Job is what one run plays on its topology: a Scenario's workload and
// its faults, or, when Trace is set, a trace's few steps (a shrink's
// reproducer, played by a Script). Everything else on the run path (the
// folder, the topology, the check, the files) is the same for both, so
// the path takes a Job and asks it only what differs.
type Job struct {
	Scenario Scenario
	Trace    *Trace
}

// Resolve validates a trace and resolves the job's Scenario (a trace's
// own): the one place a run's settings are settled.
func (j Job) Resolve() (Job, error) {
	if j.Trace != nil {
		if err := j.Trace.Validate(); err != nil {
			return j, err
		}
		j.Scenario = j.Trace.Scenario
	}
	var err error
	j.Scenario, err = j.Scenario.Resolve()
	return j, err
}

// Folder is where a run of the resolved job writes when it is given
// none; a trace's folder ends in -trace.
func (j Job) Folder(now time.Time) string {
	if j.Trace != nil {
		return j.Scenario.Folder(now) + "-trace"
	}
	return j.Scenario.Folder(now)
}

// Save makes dir and writes the job's input into it: trace.json for a
// trace; for a scenario, scenario.json with the fault schedule its seed
// gives and replay, the command that runs it again, unless keep is set
// and dir has one (a caller that reuses a folder wrote it).
func (j Job) Save(dir, replay string, keep bool) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("output folder: %w", err)
	}
	if j.Trace != nil {
		return j.Trace.Save(filepath.Join(dir, TraceFileName))
	}
	path := filepath.Join(dir, RunFileName)
	if _, err := os.Stat(path); err == nil && keep {
		return nil
	}
	events, err := j.Scenario.Schedule()
	if err != nil {
		return err
	}
	return RunFile{Format: RunFileFormat, Scenario: j.Scenario, Schedule: events, Replay: replay}.Save(path)
}

// Play is how a run path plays a job and watches it play.
type Play struct {
	// Recorder records a workload's operations; a trace's Script records
	// its own.
	Recorder *history.Recorder
	// Stream, when set, is where every operation of a workload goes as it
	// returns (ops.jsonl): a run killed before history.json is written
	// leaves what it had.
	Stream    string
	Log       *slog.Logger
	StderrDir string
	Configure func(*lockclient.Config)
	Injected  func(fault.Event, error)
}

// Play plays the resolved job on t: the trace's steps, or the workload
// and its faults on their schedule.
func (j Job) Play(ctx context.Context, t *topology.Topology, p Play) (*ChaosResult, error) {
	if j.Trace != nil {
		h, err := j.Trace.Play(ctx, t, p.Log)
		return &ChaosResult{History: h}, err
	}
	meta := j.Meta(t)
	if p.Stream != "" {
		if err := p.Recorder.StreamTo(p.Stream, meta); err != nil {
			return nil, err
		}
		defer p.Recorder.CloseStream()
	}
	c := Chaos{Workload: Workload{Scenario: j.Scenario, Recorder: p.Recorder, Log: p.Log}, StderrDir: p.StderrDir, Log: p.Log, Injected: p.Injected, Configure: p.Configure}
	res, err := c.Run(ctx, t)
	if err != nil {
		return nil, err
	}
	if p.Stream != "" {
		err = p.Recorder.CloseStream()
	}
	return res, err
}

// Meta is the history's meta of a run of the resolved job on t, as the
// run knows it before it starts.
func (j Job) Meta(t *topology.Topology) history.Meta {
	s := j.Scenario
	return history.Meta{Server: t.Build.Name, Version: t.Version, Topology: string(t.Kind), Client: s.Client, Seed: s.Seed,
		TTLms: s.TTL.Milliseconds(), Clients: s.Clients, Keys: s.Keys, Fenced: s.Fenced || lockclient.DrawsFences(s.Client), Faults: s.Faults}
}
