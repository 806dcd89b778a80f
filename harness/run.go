package harness

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	"github.com/lockcheck/lockcheck/checker"
	"github.com/lockcheck/lockcheck/history"
	"github.com/lockcheck/lockcheck/reports"
	"github.com/lockcheck/lockcheck/scenarios"
	"github.com/lockcheck/lockcheck/topology"
)

// Run is one chaos run's plain data: the workload, the faults drawn from by
// the seeded schedule, and the folder its files go to.
type Run struct {
	Client                          string
	Faults                          []scenarios.Fault
	Duration, TTL, WorkMin, WorkMax time.Duration
	Seed                            int64
	Clients, Keys                   int
	// StallRate is the share of holds that stall past the TTL without
	// extending, like a long GC pause (0: none). An unfenced client's
	// write after such a stall is stale whatever the server does, so a
	// correct unfenced client fails the resource check with stalls on:
	// they are for showing that, not for gating a library on a fault.
	StallRate float64
	// PauseRate is the share of holds frozen for 1.2-2 TTL inside one lock
	// operation (0: none). Like a stall, it makes an unfenced client's
	// next write stale; it is what shows a lock step done in two commands.
	PauseRate float64
	// AOF says the topology runs with AOF (a killed node keeps its data).
	AOF bool
	// Out is the run's folder: history.json, result.json, report.html,
	// linearizability.html, junit.xml, run.log, the nodes' logs.
	Out string
	// Progress, when set, gets a live line once a second: elapsed time,
	// operations, faults injected, violations so far.
	Progress io.Writer
}

// Defaults are lockcheck run's: six clients on one key, so that every lock
// is contended, and a 15 s lease, longer than a failover, so that a lock
// lost with a primary is still believed held when the new primary hands it
// out. Holds last from TTL/5 (3 s: longer than a failover, so the holder
// whose lock was lost with the primary still believes in it when the
// replica hands it out again) to one TTL (three extend periods), evenly on
// a log scale: longer holds would keep the key taken for most of a run,
// and kill-primary waits for an acquire.
var Defaults = Run{Duration: 60 * time.Second, TTL: 15 * time.Second, Clients: 6, Keys: 1}

// WithDefaults fills zero fields from Defaults.
func (r Run) WithDefaults() Run {
	if r.Duration <= 0 {
		r.Duration = Defaults.Duration
	}
	if r.TTL <= 0 {
		r.TTL = Defaults.TTL
	}
	if r.Clients <= 0 {
		r.Clients = Defaults.Clients
	}
	if r.Keys <= 0 {
		r.Keys = Defaults.Keys
	}
	if r.WorkMin <= 0 {
		r.WorkMin = r.TTL / 5
	}
	if r.WorkMax <= 0 {
		r.WorkMax = r.TTL
	}
	return r
}

// Outcome is what a run produced.
type Outcome struct {
	History *history.History
	Check   *checker.Result
	Result  reports.RunResult
	// Interrupted says ctx ended before the run's duration: the results
	// are partial.
	Interrupted bool
}

// DefaultOut is the folder a run writes to when none is given.
func DefaultOut(t *topology.Topology, client string, seed int64) string {
	return filepath.Join("runs", fmt.Sprintf("%s-%s-%s-%s-%d", time.Now().Format("20060102-150405"), t.Build.Name, t.Kind, SafeName(client), seed))
}

// Execute runs the workload and faults on t, checks the history and writes
// the run's folder. After Ctrl-C (ctx ended) the history so far is still
// checked and written, and the outcome says it is partial. It does not tear
// t down: its caller started it.
func (r Run) Execute(ctx context.Context, t *topology.Topology) (*Outcome, error) {
	r = r.WithDefaults()
	if r.Out == "" {
		r.Out = DefaultOut(t, r.Client, r.Seed)
	}
	if err := os.MkdirAll(r.Out, 0o755); err != nil {
		return nil, fmt.Errorf("output folder: %w", err)
	}
	logFile, err := os.OpenFile(filepath.Join(r.Out, "run.log"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return nil, fmt.Errorf("run log: %w", err)
	}
	defer logFile.Close()
	log := slog.New(slog.NewTextHandler(logFile, nil))
	rec := history.NewRecorder()
	// Every operation goes to ops.jsonl as it returns: a run killed before
	// history.json is written leaves what it had (lockcheck check DIR).
	stream := filepath.Join(r.Out, history.StreamName)
	meta := history.Meta{Server: t.Build.Name, Version: t.Version, Topology: string(t.Kind), Client: r.Client, Seed: r.Seed,
		TTLms: r.TTL.Milliseconds(), Clients: r.Clients, Keys: r.Keys, Fenced: scenarios.DrawsFences(r.Client), Faults: faultNames(r.Faults)}
	if err := rec.StreamTo(stream, meta); err != nil {
		return nil, err
	}
	defer rec.CloseStream()
	var injected atomic.Int64
	chaos := scenarios.Chaos{
		Workload: scenarios.Workload{Client: r.Client, Clients: r.Clients, Keys: r.Keys, TTL: r.TTL, Duration: r.Duration, Seed: r.Seed,
			WorkMin: r.WorkMin, WorkMax: r.WorkMax, StallRate: shareOrNone(r.StallRate), PauseRate: shareOrNone(r.PauseRate), Recorder: rec, Log: log},
		Faults:    r.Faults,
		AOF:       r.AOF,
		StderrDir: r.Out,
		Log:       log,
		Injected:  func(scenarios.Event, error) { injected.Add(1) },
	}
	stopProgress := func() {}
	if r.Progress != nil {
		stopProgress = progressLine(ctx, r.Progress, rec, &injected)
	}
	res, err := chaos.Run(ctx, t)
	stopProgress()
	// The checks and files are written after Ctrl-C too.
	wctx := context.WithoutCancel(ctx)
	if lerr := t.SaveLogs(wctx, filepath.Join(r.Out, "nodes")); lerr != nil {
		log.Warn("node logs", "err", lerr)
	}
	if err != nil {
		return nil, err
	}
	h := res.History
	if err := h.Save(filepath.Join(r.Out, "history.json")); err != nil {
		return nil, err
	}
	if err := rec.CloseStream(); err != nil {
		log.Warn("history stream", "err", err)
	}
	os.Remove(stream) // history.json has it all

	result, err := checker.Run(wctx, h, checker.OptionsFor(h))
	if err != nil {
		return nil, fmt.Errorf("check: %w", err)
	}
	rr := reports.NewRunResult(h, result, res.Notes)
	if err := WriteFiles(r.Out, h, result, rr); err != nil {
		return nil, err
	}
	return &Outcome{History: h, Check: result, Result: rr, Interrupted: ctx.Err() != nil}, nil
}

// stallRate maps the run's stall rate (0: none) to the workload's (0 means
// its default there, negative none).
func shareOrNone(r float64) float64 {
	if r <= 0 {
		return -1
	}
	return r
}

// WriteFiles writes a checked run's result.json, junit.xml, report.html and
// linearizability.html into out.
func WriteFiles(out string, h *history.History, result *checker.Result, rr reports.RunResult) error {
	if err := rr.Save(filepath.Join(out, "result.json")); err != nil {
		return err
	}
	var j reports.JUnit
	j.Name = "lockcheck"
	j.Add(rr.Suite(fmt.Sprintf("%s %s %s %s", rr.Server, rr.Topology, rr.Client, strings.Join(rr.Faults, "+"))))
	if err := j.Write(filepath.Join(out, "junit.xml")); err != nil {
		return err
	}
	return reports.WriteReport(out, h, result)
}

// SafeName makes s usable in a file name.
func SafeName(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '.' {
			return r
		}
		return '_'
	}, s)
}

// faultNames names faults as a history's meta does.
func faultNames(faults []scenarios.Fault) []string {
	var out []string
	for _, f := range faults {
		out = append(out, f.Name())
	}
	return out
}
