package scenarios

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/lockcheck/lockcheck/history"
	"github.com/lockcheck/lockcheck/scenarios/fault"
	"github.com/lockcheck/lockcheck/scenarios/lockclient"
	"github.com/lockcheck/lockcheck/topology"
)

// Chaos runs a workload and the faults its Scenario names, injected on the
// seeded schedule while it runs.
type Chaos struct {
	Workload Workload
	Log      *slog.Logger
	// Injected, when set, is told each fault as it ends.
	Injected func(fault.Event, error)
	// StderrDir keeps external adapters' stderr (the run's folder).
	StderrDir string
	// Configure, when set, adjusts the clients' configuration (a test
	// knob such as FenceGap).
	Configure func(*lockclient.Config)
}

// ChaosResult is what a run produced.
type ChaosResult struct {
	History *history.History
	// Schedule is the plan the seed gave; Notes say which faults failed.
	Schedule []fault.Event
	Notes    []string
}

// Run drives the workload against t while the faults run on schedule.
// When ctx ends (Ctrl-C) the workload stops, the fault in progress puts
// the topology back (resume, heal, clock reset) and the history recorded
// so far is returned.
func (c Chaos) Run(ctx context.Context, t *topology.Topology) (*ChaosResult, error) {
	if c.Log == nil {
		c.Log = slog.New(slog.DiscardHandler)
	}
	// The caller may pass a Recorder to watch the history as it grows.
	w := c.Workload.withDefaults()
	faults, err := w.FaultList()
	if err != nil {
		return nil, err
	}
	for _, f := range faults {
		if !f.Available(t.Kind) {
			return nil, fmt.Errorf("fault %s does not fit a %s topology", f.Name(), t.Kind)
		}
	}
	events, err := w.Schedule()
	if err != nil {
		return nil, err
	}
	if w.Freezer == nil {
		w.Freezer = fault.NewFreezer()
	}
	if w.Gate == nil {
		w.Gate = fault.NewGate()
	}
	env := fault.Env{Topo: t, Rec: w.Recorder, TTL: w.TTL, CallTimeout: w.CallTimeout, AOF: w.AOF, Log: c.Log, Freezer: w.Freezer, Gate: w.Gate,
		UpgradeTo: w.UpgradeTo, Reshard: w.Reshard, Probe: probeFor(w.Client)}

	// The faults end with the workload; a fault that panics ends both (the
	// run is void, and the caller must still tear down).
	wctx, abort := context.WithCancelCause(ctx)
	defer abort(nil)
	fctx, stopFaults := context.WithCancel(wctx)
	defer stopFaults()
	// A rolling upgrade's run ends with its last step.
	runCtx, endRun := context.WithCancel(wctx)
	defer endRun()
	var notes faultNotes
	var faultsDone atomic.Int64
	w.FaultsDone, w.Planned = func() int { return int(faultsDone.Load()) }, len(events)
	var wg sync.WaitGroup
	wg.Go(func() {
		guard(abort, "fault schedule", func() {
			fault.RunSchedule(fctx, w.Recorder.Started(), events, faults, env, func(ev fault.Event, err error) {
				if err != nil && fctx.Err() == nil {
					notes.add(fmt.Sprintf("%s at %s on %s: %v", ev.Fault, ev.At.Round(time.Millisecond), ev.Key, err))
					c.Log.Warn("fault failed", "fault", ev.Fault, "err", err)
				}
				faultsDone.Add(1)
				if c.Injected != nil {
					c.Injected(ev, err)
				}
			})
			if w.UpgradeTo != "" {
				endRun()
			}
		})
	})
	cfg := lockclient.ConfigFor(t)
	cfg.StderrDir = c.StderrDir
	if c.Configure != nil {
		c.Configure(&cfg)
	}
	h, err := w.Run(runCtx, cfg)
	stopFaults()
	wg.Wait()
	if perr := panicked(wctx); perr != nil {
		err = perr
	}
	if err != nil {
		return nil, err
	}
	h.Meta.Faults = w.Faults
	// The fault windows closed after the workload's snapshot.
	h.Faults = w.Recorder.Faults()
	return &ChaosResult{History: h, Schedule: events, Notes: notes.list}, nil
}

// probeFor says which of client's lock commands a node lacks, probed on
// the node (lockclient.ProbeNode), for the upgrade's step table.
func probeFor(client string) func(context.Context, *topology.Node) ([]string, bool, error) {
	return func(ctx context.Context, n *topology.Node) ([]string, bool, error) {
		if !lockclient.NeedsKnown(client) {
			return nil, false, nil
		}
		c, err := n.Client()
		if err != nil {
			return nil, false, err
		}
		caps, err := lockclient.ProbeNode(ctx, c)
		if err != nil {
			return nil, false, err
		}
		var out []string
		for _, cp := range caps.Missing(client) {
			out = append(out, string(cp))
		}
		return out, true, nil
	}
}

// faultNotes collects the faults that failed, from the schedule's goroutine.
type faultNotes struct {
	mu   sync.Mutex
	list []string
}

func (n *faultNotes) add(s string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.list = append(n.list, s)
}
