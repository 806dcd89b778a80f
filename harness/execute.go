package harness

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
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
	"github.com/lockcheck/lockcheck/scenarios/lockclient"
	"github.com/lockcheck/lockcheck/topology"
)

// Options are how a run is carried out, as opposed to what it is (the
// Scenario): where its files go and what watches it.
type Options struct {
	// Out is the run's folder: scenario.json, history.json, result.json,
	// report.html, linearizability.html, junit.xml, run.log, the nodes'
	// logs (default runs/<time>-<server>-<topology>-<client>-<seed>).
	Out string
	// Sources say where images come from (a user's binary, a local tag).
	Sources topology.Sources
	// Log gets the start-up lines (image builds, topology start).
	Log io.Writer
	// Progress, when set, gets a live line once a second: elapsed time,
	// operations, faults injected, violations so far.
	Progress io.Writer
	// Configure, when set, adjusts the clients' configuration: a test's
	// hook, never a run setting (those are the Scenario's).
	Configure func(*lockclient.Config)
	// StopOnViolation ends the run, with its check and files, once the
	// live count finds a violation the run's options do not allow (a
	// double holder of an unfenced client, a fence or resource failure):
	// the answer is known, and a CI job stops paying for the rest.
	StopOnViolation bool
	// Replay is the command that runs this scenario again, as the run's
	// files show it (default: lockcheck replay OUT). A library's test,
	// whose client lockcheck's command does not know, gives its own.
	Replay string
	// Counted says the run is one of a measurement's many, whose figures
	// are counted rather than read: its check draws no linearizability
	// picture, and of the pages only result.json is written (no
	// report.html, linearizability.html or junit.xml), since drawing them
	// would cost each of hundreds of runs for no reader.
	Counted bool
	// StderrDir keeps external adapters' stderr (default: the run's
	// folder): a measurement, whose run folders are scratch, keeps its
	// runs' in one folder.
	StderrDir string
}

func (o Options) replay() string {
	if o.Replay != "" {
		return o.Replay
	}
	return ReplayCommand(o.Out)
}

// Outcome is what a run produced.
type Outcome struct {
	// Out is the run's folder.
	Out string
	// History is the run's history, whole when it has at most
	// checker.GroupOps operations, else its head (meta, faults; no
	// operations: Check.Ops counts them, history.json has them).
	History *history.History
	Check   *checker.Result
	Result  reports.RunResult
	// Schedule is the fault schedule the seed gave.
	Schedule []fault.Event
	// Interrupted says ctx ended before the run's duration: the results
	// are partial.
	Interrupted bool
	// Stopped says StopOnViolation ended the run early, a violation found.
	Stopped bool
}

// DefaultOut is the folder a run writes to when none is given.
func DefaultOut(s scenarios.Scenario) string {
	s = s.WithDefaults()
	return filepath.Join("runs", fmt.Sprintf("%s-%s-%s-%s-%d", time.Now().Format("20060102-150405"), s.Server, s.Topology, SafeName(s.Client), s.Seed))
}

// Execute is the one way a scenario runs: it writes scenario.json, starts
// the scenario's topology (obtaining every build's image), runs the
// workload and its faults, checks the history, writes the run's folder
// and tears the topology down, also after Ctrl-C (ctx ended: the history
// so far is checked and written, and the outcome says it is partial) and
// after an error. The CLI, the matrix, the suites and bench all run
// through it.
func Execute(ctx context.Context, eng *topology.Engine, s scenarios.Scenario, o Options) (*Outcome, error) {
	s = s.WithDefaults()
	if err := s.Validate(); err != nil {
		return nil, err
	}
	if o.Out == "" {
		o.Out = DefaultOut(s)
	}
	if o.Log == nil {
		o.Log = io.Discard
	}
	if err := prepare(s, o.Out, o.replay()); err != nil {
		return nil, err
	}
	return onTopology(ctx, eng, s, o, func(t *topology.Topology) (*Outcome, error) { return ExecuteOn(ctx, t, s, o) })
}

// onTopology starts s's topology, runs f on it and tears it down, also
// after Ctrl-C (ctx ended) or an error.
func onTopology(ctx context.Context, eng *topology.Engine, s scenarios.Scenario, o Options, f func(*topology.Topology) (*Outcome, error)) (out *Outcome, err error) {
	t, err := StartScenario(ctx, eng, s, o.Sources, o.Log)
	if err != nil {
		return nil, fmt.Errorf("topology did not start: %w", err)
	}
	defer func() {
		if terr := Teardown(ctx, t); terr != nil && err == nil {
			err = terr
		}
	}()
	return f(t)
}

// StartScenario obtains the image of every build the scenario's nodes run
// and starts its topology. On error nothing is left running.
func StartScenario(ctx context.Context, eng *topology.Engine, s scenarios.Scenario, src topology.Sources, log io.Writer) (*topology.Topology, error) {
	s = s.WithDefaults()
	b, err := LookupBuild(s.Server, src)
	if err != nil {
		return nil, err
	}
	opts := topology.Options{AOF: s.AOF, Fsync: s.Fsync, Nodes: s.Nodes, ServerConfig: s.ServerConfig(), NodeConfig: s.NodeConfig, ProxyClients: fault.NeedsClientProxy(s.Faults),
		NodeImages: map[string]string{}, Images: map[string]string{}}
	obtain := func(name string) (string, error) {
		nb, err := LookupBuild(name, src)
		if err != nil {
			return "", err
		}
		img, err := eng.Obtain(ctx, nb, src, log)
		if err != nil {
			return "", err
		}
		return img.Ref, nil
	}
	for node, name := range s.NodeBuilds {
		ref, err := obtain(name)
		if err != nil {
			return nil, fmt.Errorf("node %s: %w", node, err)
		}
		opts.NodeImages[node] = ref
	}
	if s.UpgradeTo != "" {
		ref, err := obtain(s.UpgradeTo)
		if err != nil {
			return nil, fmt.Errorf("upgrade to %s: %w", s.UpgradeTo, err)
		}
		opts.Images[s.UpgradeTo] = ref
	}
	return Start(ctx, eng, b, src, s.Topology, opts, log)
}

// LookupBuild finds a build by name, including a user's own binary's.
func LookupBuild(name string, src topology.Sources) (topology.Build, error) {
	b, err := topology.Lookup(name)
	if err == nil {
		return b, nil
	}
	if _, ok := src.Binaries[name]; ok {
		return topology.CustomBuild(name), nil
	}
	return b, err
}

// prepare makes the run's folder and writes scenario.json into it.
func prepare(s scenarios.Scenario, out, replay string) error {
	if err := os.MkdirAll(out, 0o755); err != nil {
		return fmt.Errorf("output folder: %w", err)
	}
	events, err := s.Schedule()
	if err != nil {
		return err
	}
	f := scenarios.RunFile{Format: scenarios.RunFileFormat, Scenario: s, Schedule: events, Replay: replay}
	return f.Save(filepath.Join(out, scenarios.RunFileName))
}

// ReplayCommand is the command that runs a folder's scenario again.
func ReplayCommand(dir string) string { return "lockcheck replay " + quoteArg(dir) }

// ExecuteOn runs s on t, which its caller started for s and tears down: a
// suite or a library's test reuses one topology across runs. It writes
// scenario.json when Execute has not.
func ExecuteOn(ctx context.Context, t *topology.Topology, s scenarios.Scenario, o Options) (*Outcome, error) {
	s = s.WithDefaults()
	if t.Build.Name != s.Server || t.Kind != s.Topology {
		return nil, fmt.Errorf("scenario %s runs on %s %s, not on the %s %s started", s.Name(), s.Server, s.Topology, t.Build.Name, t.Kind)
	}
	if o.Out == "" {
		o.Out = DefaultOut(s)
	}
	if _, err := os.Stat(filepath.Join(o.Out, scenarios.RunFileName)); err != nil {
		if err := prepare(s, o.Out, o.replay()); err != nil {
			return nil, err
		}
	}
	logFile, err := os.OpenFile(filepath.Join(o.Out, "run.log"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return nil, fmt.Errorf("run log: %w", err)
	}
	defer logFile.Close()
	log := slog.New(slog.NewTextHandler(logFile, nil))
	rec := history.NewRecorder()
	// Every operation goes to ops.jsonl as it returns: a run killed before
	// history.json is written leaves what it had (lockcheck check DIR).
	stream := filepath.Join(o.Out, history.StreamName)
	meta := history.Meta{Server: t.Build.Name, Version: t.Version, Topology: string(t.Kind), Client: s.Client, Seed: s.Seed,
		TTLms: s.TTL.Milliseconds(), Clients: s.Clients, Keys: s.Keys, Fenced: s.Fenced || lockclient.DrawsFences(s.Client), Faults: s.Faults}
	if err := rec.StreamTo(stream, meta); err != nil {
		return nil, err
	}
	defer rec.CloseStream()
	var injected atomic.Int64
	chaos := scenarios.Chaos{
		Workload:  scenarios.Workload{Scenario: s, Recorder: rec, Log: log},
		StderrDir: cmp.Or(o.StderrDir, o.Out),
		Log:       log,
		Injected:  func(fault.Event, error) { injected.Add(1) },
		Configure: o.Configure,
	}
	stopProgress, stopWatch := func() {}, func() {}
	if o.Progress != nil {
		stopProgress = progressLine(ctx, o.Progress, rec, &injected, s.TTL, meta.Fenced)
	}
	runCtx, stopRun := context.WithCancel(ctx)
	defer stopRun()
	var stopped atomic.Bool
	if o.StopOnViolation {
		stopWatch = stopOnViolation(runCtx, rec, s.TTL, meta.Fenced, func(n int) {
			log.Info("stopping the run: the live check found a violation", "violations", n, "after", time.Duration(rec.Now()))
			stopped.Store(true)
			stopRun()
		})
	}
	res, err := chaos.Run(runCtx, t)
	stopWatch()
	stopProgress()
	// The checks and files are written after Ctrl-C too.
	wctx := context.WithoutCancel(ctx)
	if lerr := t.SaveLogs(wctx, filepath.Join(o.Out, "nodes")); lerr != nil {
		log.Warn("node logs", "err", lerr)
	}
	if err != nil {
		return nil, err
	}
	// history.json is made from the stream, and checked from the file a
	// group of keys at a time: the run's operations are never all in
	// memory.
	head := res.History
	head.Format = history.Format
	if head.Scenario, err = json.Marshal(s); err != nil {
		return nil, err
	}
	if err := rec.CloseStream(); err != nil {
		return nil, err
	}
	path := filepath.Join(o.Out, "history.json")
	if _, err := history.SaveStream(stream, path, head); err != nil {
		return nil, err
	}
	os.Remove(stream) // history.json has it all
	result, h, err := checker.RunFile(wctx, path, func(opts *checker.Options) {
		opts.ClockTolerance = s.ClockTolerance
		if o.Counted {
			opts.PictureOps = -1
		}
	})
	if err != nil {
		return nil, fmt.Errorf("check: %w", err)
	}
	if stopped.Load() {
		res.Notes = append(res.Notes, fmt.Sprintf("stopped at %s of %s: the live check found a violation (--stop-on-violation)",
			time.Duration(h.Meta.DurationNs).Round(time.Second), s.Duration))
	}
	rr := reports.NewRunResult(h, result, res.Notes)
	rr.Replay = o.replay()
	if o.Counted {
		err = rr.Save(filepath.Join(o.Out, "result.json"))
	} else {
		err = WriteFiles(o.Out, h, result, rr)
	}
	if err != nil {
		return nil, err
	}
	return &Outcome{Out: o.Out, History: h, Check: result, Result: rr, Schedule: res.Schedule, Interrupted: ctx.Err() != nil, Stopped: stopped.Load()}, nil
}

// CheckOptions are the checker's options for a run of s: the checker's
// own for the history, with the scenario's clock tolerance.
func CheckOptions(h *history.History, s scenarios.Scenario) checker.Options {
	opts := checker.OptionsFor(h)
	opts.ClockTolerance = s.WithDefaults().ClockTolerance
	return opts
}
