package scenarios

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/lockcheck/lockcheck/history"
	"github.com/lockcheck/lockcheck/scenarios/fault"
	"github.com/lockcheck/lockcheck/scenarios/internal/pace"
	"github.com/lockcheck/lockcheck/scenarios/lockclient"
	"github.com/lockcheck/lockcheck/topology"
)

// retryEvery is how often a granted acquire is tried again in a replay.
const retryEvery = 50 * time.Millisecond

// faultGrace is how long a replay waits for its faults' undo after its
// last step.
const faultGrace = 2 * time.Second

// Play runs the trace on t, which its caller started for tr.Scenario and
// tears down, and returns the history it recorded: every attempt of every
// call, the fault windows, and the run's meta (so the checker judges it
// like any run). A fault step starts its fault and waits until its window
// opens; faults still running after the last step are stopped.
func (tr Trace) Play(ctx context.Context, t *topology.Topology, log *slog.Logger) (*history.History, error) {
	s := tr.Scenario.WithDefaults()
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	kinds := make([]string, tr.Workers)
	for i := range kinds {
		kinds[i] = s.Client
	}
	sc, err := NewScript(t, kinds, func(_ int, cfg *lockclient.Config) {
		cfg.Timeout, cfg.Wait = s.CallTimeout, s.Wait
		cfg.FenceGap, cfg.FenceGapRandom = s.FenceGap, s.FenceGapRandom
		cfg.Log = log
	})
	if err != nil {
		return nil, err
	}
	defer sc.Close()
	p := &player{tr: tr, s: s, sc: sc, log: log, held: make([]Step, tr.Workers)}
	// The faults still running after the last step are stopped; their
	// undo (a killed node's restart, its wait to rejoin as a replica) is
	// given faultGrace and then left to end with the topology's teardown:
	// the trace has nothing more to record, and a replay should not wait
	// half a minute for a node that nothing reads.
	fctx, stopFaults := context.WithCancel(ctx)
	defer stopFaults()
	for i, st := range tr.Steps {
		if err := p.wait(ctx, st); err != nil {
			return nil, fmt.Errorf("trace step %d (%s): %w", i+1, st, err)
		}
		if err := p.do(ctx, fctx, i, st); err != nil {
			return nil, fmt.Errorf("trace step %d (%s): %w", i+1, st, err)
		}
	}
	stopFaults()
	done := make(chan struct{})
	go func() { p.faults.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(faultGrace):
	}
	if err := p.faultErr(); err != nil {
		log.Warn("fault failed", "err", err)
	}
	h := sc.History()
	h.Meta.TTLms, h.Meta.Seed, h.Meta.Keys = s.TTL.Milliseconds(), s.Seed, 1
	h.Meta.Faults = nil
	for _, st := range tr.Steps {
		if st.Kind == StepFault {
			h.Meta.Faults = append(h.Meta.Faults, st.Fault)
		}
	}
	h.Faults = sc.Rec.Faults()
	return h, nil
}

// player carries one replay's state.
type player struct {
	tr  Trace
	s   Scenario
	sc  *Script
	log *slog.Logger
	// held is each worker's last acquire, whose token its extend,
	// release and write use.
	held []Step
	// prevReturn is when the previous step returned (a fault step: when
	// its window opened); lastCall when the last acquire step was first
	// called.
	prevReturn, lastCall int64
	// windows are the fault windows the trace's fault steps opened, by
	// step index.
	windows map[int]int
	faults  sync.WaitGroup
	mu      sync.Mutex
	errs    []error
}

// wait sleeps until the step's event happened and its delay passed.
func (p *player) wait(ctx context.Context, st TraceStep) error {
	at := p.prevReturn
	if st.After != AfterPrevious {
		win, ok := p.windows[st.FaultStep]
		if !ok {
			return fmt.Errorf("its fault step did not start")
		}
		var err error
		if at, err = p.awaitWindow(ctx, win, st.After); err != nil {
			return err
		}
	}
	p.sc.SleepPast(ctx, at, time.Duration(st.DelayMs)*time.Millisecond)
	return ctx.Err()
}

// awaitWindow waits until fault window win shows the event a, and says
// when it happened. A fault that ended without promoting anyone fails the
// wait.
func (p *player) awaitWindow(ctx context.Context, win int, a Anchor) (int64, error) {
	limit := 2*p.s.TTL + time.Minute
	var at int64
	err := pace.Poll(ctx, limit, 5*time.Millisecond, func() bool {
		f := p.sc.Rec.Faults()[win]
		switch a {
		case AfterFaultStart:
			at = f.Start
		case AfterFaultPromoted:
			at = f.PromotedAt
			if at == 0 && f.End > 0 {
				at = -1
			}
		case AfterFaultEnd:
			at = f.End
		}
		return at != 0
	})
	if err == pace.ErrLimit {
		return 0, fmt.Errorf("the fault's %s did not come within %s", a, limit)
	}
	if at < 0 {
		return 0, fmt.Errorf("the fault ended without a promotion: %w", p.faultErr())
	}
	return at, err
}

// do runs one step.
func (p *player) do(ctx, fctx context.Context, i int, st TraceStep) error {
	key, ttl, w := p.tr.Key, p.s.TTL, st.Worker
	var r Step
	switch st.Kind {
	case StepFault:
		return p.inject(ctx, fctx, i, st)
	case StepAcquire:
		first := p.sc.Acquire(ctx, w, key, ttl)
		r, p.lastCall = first, first.Call
		for st.Granted && unanswered(r) && time.Duration(p.sc.Rec.Now()-first.Call) < ttl && pace.Sleep(ctx, retryEvery) {
			r = p.sc.Acquire(ctx, w, key, ttl)
		}
		p.held[w] = r
	case StepExtend:
		r = p.sc.Extend(ctx, w, key, p.held[w].Token, ttl)
	case StepRelease:
		r = p.sc.Release(ctx, w, key, p.held[w].Token)
	case StepWrite:
		p.sc.Write(w, key, p.held[w])
		p.prevReturn = p.sc.Rec.Now()
		return nil
	case StepObserve:
		p.sc.Observe(ctx, key)
		p.prevReturn = p.sc.Rec.Now()
		return nil
	}
	p.prevReturn = r.Return
	return nil
}

// inject starts step i's fault at the trace's key and waits until its
// window opens (a fault opens it once its preparation is in place: after
// kill-primary cut replication, so the acquire after it lands on the
// primary alone).
func (p *player) inject(ctx, fctx context.Context, i int, st TraceStep) error {
	f, err := fault.Lookup(st.Fault)
	if err != nil {
		return err
	}
	if p.windows == nil {
		p.windows = map[int]int{}
	}
	before := len(p.sc.Rec.Faults())
	// A fault that strikes after an acquire (clock-jump) began, in the
	// run, right after the acquire before it: that acquire is the one it
	// waits for. Otherwise it waits for the next one.
	from := p.sc.Rec.Now()
	if i > 0 && p.tr.Steps[i-1].Kind == StepAcquire {
		from = p.lastCall
	}
	env := fault.Env{Topo: p.sc.Topo, Rec: p.sc.Rec, TTL: p.s.TTL, CallTimeout: p.s.CallTimeout, Key: p.tr.Key, AOF: p.s.AOF,
		From: from, Log: p.log}
	done := make(chan struct{})
	p.faults.Go(func() {
		defer close(done)
		if err := f.Inject(fctx, env); err != nil && fctx.Err() == nil {
			p.mu.Lock()
			p.errs = append(p.errs, fmt.Errorf("%s: %w", st.Fault, err))
			p.mu.Unlock()
		}
	})
	limit := 2*p.s.TTL + time.Minute
	opened := pace.Poll(ctx, limit, 5*time.Millisecond, func() bool {
		select {
		case <-done:
			return true
		default:
		}
		return len(p.sc.Rec.Faults()) > before
	})
	if opened == pace.ErrLimit {
		return fmt.Errorf("its window did not open within %s", limit)
	}
	if len(p.sc.Rec.Faults()) <= before {
		return fmt.Errorf("it ended before its window opened: %w", p.faultErr())
	}
	p.windows[i] = before
	p.prevReturn = p.sc.Rec.Faults()[before].Start
	return opened
}

// unanswered says an acquire was neither granted nor refused: an error
// reply or no reply, as a client gets while a failover is under way. A
// replay tries such an acquire again; a refusal (the key is held) is an
// answer, and the step stays refused.
func unanswered(r Step) bool {
	return r.Outcome == history.Unknown || r.Outcome == history.Fail && r.Err != ""
}

// faultErr is what the faults that failed said.
func (p *player) faultErr() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.errs) == 0 {
		return nil
	}
	return fmt.Errorf("%v", p.errs)
}
