package scenarios

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/lockcheck/lockcheck/history"
	"github.com/lockcheck/lockcheck/scenarios/fault"
	"github.com/lockcheck/lockcheck/scenarios/lockclient"
	"github.com/lockcheck/lockcheck/topology"
)

// Workload runs a Scenario's lock workload: Clients workers, each with its
// own logical client, contend for Keys lock keys. Each worker loops: pick a
// key, acquire (retrying with jittered backoff), work while extending every
// TTL/3 and writing to the Resource, release. Unfenced, a holder writes
// after every step; fenced, it writes once (at the end, or on waking from
// a stall), because the resource takes each fence only once. Besides the
// Scenario it holds only what a run is watched and steered through.
type Workload struct {
	Scenario
	// Recorder collects the history (a new one when nil); pass one to
	// record fault windows in the same history.
	Recorder *history.Recorder
	// Freezer, when set, lets the pause-client fault freeze a holder.
	Freezer *fault.Freezer
	// Gate, when set, lets kill-primary hold back acquire attempts.
	Gate *fault.Gate
	// Log receives lost locks and client notes; nil discards.
	Log *slog.Logger
	// Progress, when set, gets the counters every ProgressEvery (1 s) and
	// once at the end.
	Progress      func(Stats)
	ProgressEvery time.Duration
	// FaultsDone, when set, says how many of the planned fault steps are
	// over (Planned of them): what UntilCovered waits for.
	FaultsDone func() int
	Planned    int
}

func (w Workload) withDefaults() Workload {
	if w.Recorder == nil {
		w.Recorder = history.NewRecorder()
	}
	if w.Log == nil {
		w.Log = slog.New(slog.DiscardHandler)
	}
	if w.ProgressEvery <= 0 {
		w.ProgressEvery = time.Second
	}
	return w
}

// Run runs the workload, whose Scenario is resolved (Scenario.Resolve),
// against the servers cfg reaches until Duration
// passes or ctx ends, and returns the history with its meta filled. A
// build that lacks a command the client needs is refused before anything
// runs, with an *UnsupportedError that says so in one line.
func (w Workload) Run(ctx context.Context, cfg lockclient.Config) (*history.History, error) {
	w = w.withDefaults()
	if w.Client == "" {
		return nil, errors.New("workload: no client kind")
	}
	rec := w.Recorder
	cfg.Clock = rec.Now
	cfg.Wait, cfg.Timeout = w.Wait, w.CallTimeout
	cfg.FenceGap, cfg.FenceGapRandom = w.FenceGap, w.FenceGapRandom
	if cfg.Log == nil {
		cfg.Log = w.Log
	}
	cfg = cfg.WithDefaults()
	if err := lockclient.ValidateKind(w.Client); err != nil {
		return nil, err
	}
	// A rolling upgrade runs whatever the first build lacks: which step
	// gives the client its commands is what it shows.
	if !strings.HasPrefix(w.Client, lockclient.ExternalPrefix) && w.UpgradeTo == "" {
		pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		caps, err := lockclient.Probe(pctx, cfg.Option)
		cancel()
		if err != nil {
			return nil, err
		}
		if err := caps.Refusal(w.Client, cfg.Server, cfg.Version); err != nil {
			return nil, err
		}
	}
	clients, lates, err := w.clients(cfg)
	if err != nil {
		return nil, err
	}
	defer closeAll(clients, w.Log)
	res := NewResource(rec, w.Fenced || drawsFences(ctx, w.Client, clients[0], w.LockKeys()[0]), w.WriteGap)
	var obs *observer
	// A Redlock's lock is on a majority of independent nodes: no one
	// node's key is what its holders believe, so nothing is read.
	if w.ObserveEvery > 0 && lockclient.Observable(w.Client) && cfg.Topology != topology.Redlock {
		if obs, err = newObserver(cfg, rec); err != nil {
			return nil, err
		}
		defer obs.Close()
	}
	cov, err := w.drive(ctx, clients, lates, res, obs)
	if err != nil {
		return nil, err
	}
	meta := history.Meta{Server: cfg.Server, Version: cfg.Version, Topology: string(cfg.Topology), Client: clients[0].Name(),
		Seed: w.Seed, TTLms: w.TTL.Milliseconds(), Clients: w.Clients, Keys: w.Keys, Fenced: res.Fenced(), Coverage: &cov}
	return rec.History(meta), nil
}

// clients builds one logical client per worker, and with late replies
// on, the LateReply its connections are dialled through (nil for an
// external adapter, whose tap holds its replies back instead).
func (w Workload) clients(cfg lockclient.Config) ([]lockclient.Client, []*lockclient.LateReply, error) {
	var out []lockclient.Client
	lates := make([]*lockclient.LateReply, w.Clients)
	for i := range w.Clients {
		c := cfg
		c.ID = i
		c.Aside = func() func(*lockclient.Aside) { return w.beginAside(i) }
		if w.LateReplyRate > 0 && !strings.HasPrefix(w.Client, lockclient.ExternalPrefix) {
			lates[i] = &lockclient.LateReply{}
			c.Late = lates[i]
		}
		cl, err := lockclient.NewClient(w.Client, c)
		if err != nil {
			closeAll(out, w.Log)
			return nil, nil, fmt.Errorf("workload: client %d: %w", i, err)
		}
		out = append(out, cl)
	}
	return out, lates, nil
}

// beginAside marks a lock command that worker i's client runs on its
// own (lockclient.Config.Aside) in flight, under a client id of its own
// (it may overlap the worker's own calls), and returns what records it
// as the worker's once it returned: until then the recorder's settled
// instant stays before it, so a live check does not see the hold it
// ends still open.
func (w Workload) beginAside(i int) func(*lockclient.Aside) {
	rec := w.Recorder
	id := rec.NewClient()
	rec.Begin(id)
	return func(a *lockclient.Aside) {
		if a == nil {
			rec.Abandon(id)
			return
		}
		rec.Add(history.Op{Client: id, Worker: i, Key: a.Key, Kind: a.Kind, Token: a.Token, TTLms: a.TTL.Milliseconds(),
			Aside: true, Outcome: a.Result.Outcome, Error: a.Result.Err, Call: a.Call, Return: a.Return})
	}
}

// closeAll closes every client at once and logs the ones that did not
// close cleanly (a library that could not let go of its connections).
func closeAll(clients []lockclient.Client, log *slog.Logger) {
	var wg sync.WaitGroup
	for _, c := range clients {
		wg.Go(func() {
			if err := c.Close(); err != nil {
				log.Warn("client did not close", "client", c.Name(), "error", err)
			}
		})
	}
	wg.Wait()
}

// drive runs the workers and the progress ticker until the run ends, and
// returns what the run covered. With UntilCovered the run ends once its
// coverage goal is met (CoverageGoal), else at its duration. A worker
// that panics (its client library, most likely) stops every worker, and
// drive returns the panic as a *PanicError.
func (w Workload) drive(ctx context.Context, clients []lockclient.Client, lates []*lockclient.LateReply, res *Resource, obs *observer) (history.Coverage, error) {
	defer leaveCore()()
	ctx, abort := context.WithCancelCause(ctx)
	defer abort(nil)
	if w.Duration > 0 {
		// The bound: a run waits at most its duration again for its last
		// fault step's aftermath (Overtime).
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, w.Duration+w.Overtime())
		defer cancel()
	}
	ctx, endCovered := context.WithCancel(ctx)
	defer endCovered()
	watch := coverageWatch{goal: w.CoverageGoal(w.Planned), after: w.CoveredAfterFaults(), faults: w.FaultsDone}
	var cnt counters
	quiet := newQuietKeys()
	start := time.Now()
	var wg sync.WaitGroup
	for i, c := range clients {
		wk := &worker{id: i, client: c, late: lates[i], cid: w.Recorder.NewClient(), w: w, res: res, cnt: &cnt, plans: newPlanner(w, i), obs: obs, quiet: quiet, done: ctx.Done()}
		if obs != nil {
			wk.ocid = w.Recorder.NewClient()
		}
		wg.Go(func() { guard(abort, fmt.Sprintf("worker %d (%s)", i, c.Name()), func() { wk.run(ctx) }) })
	}
	if obs != nil {
		keys := w.LockKeys()
		wg.Go(func() { obs.run(ctx, keys, w.ObserveEvery, w.Seed, quiet) })
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	tick := time.NewTicker(w.ProgressEvery)
	defer tick.Stop()
	for {
		select {
		case <-done:
			st := cnt.snapshot(time.Since(start), clients)
			if w.Progress != nil {
				w.Progress(st)
			}
			covered := watch.cov.Covered
			watch.update(st, time.Now())
			watch.cov.Covered = covered
			return watch.cov, panicked(ctx)
		case <-tick.C:
			st := cnt.snapshot(time.Since(start), clients)
			if w.Progress != nil {
				w.Progress(st)
			}
			now := time.Now()
			if watch.update(st, now) && w.UntilCovered && !watch.cov.Covered {
				watch.cov.Covered = true
				w.Log.Info("ending the run: its coverage goal is met (--until-covered)", "coverage", watch.cov.String())
				endCovered()
			}
			if w.Duration > 0 && now.Sub(start) >= w.Duration && watch.aftermathSeen(now) {
				endCovered()
			}
		}
	}
}
