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
	s, err := tr.Scenario.Resolve()
	if err != nil {
		return nil, err
	}
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
	p := newPlayer(tr, s, sc, log)
	// The faults still running after the last step are stopped; their
	// undo (a killed node's restart, its wait to rejoin as a replica) is
	// given faultGrace and then left to end with the topology's teardown:
	// the trace has nothing more to record, and a replay should not wait
	// half a minute for a node that nothing reads.
	fctx, stopFaults := context.WithCancel(ctx)
	defer stopFaults()
	defer p.stop()
	for i, st := range tr.Steps {
		if err := p.wait(ctx, i, st); err != nil {
			return nil, fmt.Errorf("trace step %d (%s): %w", i+1, st, err)
		}
		if err := p.start(ctx, fctx, i, st); err != nil {
			return nil, fmt.Errorf("trace step %d (%s): %w", i+1, st, err)
		}
	}
	p.stop()
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

// player carries one replay's state. Each worker runs its steps in a
// goroutine of its own, one after the other, so that a step that began
// in the run while another worker's call was in flight (a client frozen
// inside it) begins while that call is in flight again.
type player struct {
	tr  Trace
	s   Scenario
	sc  *Script
	log *slog.Logger
	// held is each worker's last acquire, whose token its extend,
	// release and write use (read and written by the worker's goroutine
	// only).
	held []Step
	// steps are the steps' runs, by index: when each was called and
	// returned (a fault step: when its window opened).
	steps []stepRun
	// queues feed the workers' goroutines; busy counts the steps sent
	// to them and not yet returned.
	queues []chan func()
	busy   sync.WaitGroup
	// windows are the fault windows the trace's fault steps opened, by
	// step index.
	windows map[int]int
	faults  sync.WaitGroup
	mu      sync.Mutex
	errs    []error
}

// stepRun is one step's run: called and returned close when it was
// called and when it returned, at call and ret on the recorder's clock.
type stepRun struct {
	called, returned chan struct{}
	call, ret        int64
}

func newPlayer(tr Trace, s Scenario, sc *Script, log *slog.Logger) *player {
	p := &player{tr: tr, s: s, sc: sc, log: log, held: make([]Step, tr.Workers), steps: make([]stepRun, len(tr.Steps)),
		queues: make([]chan func(), tr.Workers), windows: map[int]int{}}
	for i := range p.steps {
		p.steps[i] = stepRun{called: make(chan struct{}), returned: make(chan struct{})}
	}
	for w := range p.queues {
		q := make(chan func(), len(tr.Steps))
		p.queues[w] = q
		go func() {
			for f := range q {
				f()
			}
		}()
	}
	return p
}

// stop waits until every step sent to a worker returned, and ends the
// workers' goroutines; a second call does nothing.
func (p *player) stop() {
	p.busy.Wait()
	for w, q := range p.queues {
		if q != nil {
			close(q)
			p.queues[w] = nil
		}
	}
}

// wait sleeps until the event step i follows happened and its delay
// passed.
func (p *player) wait(ctx context.Context, i int, st TraceStep) error {
	var at int64
	switch {
	case i == 0:
		at = p.sc.Rec.Now()
	case st.After == AfterPrevious || st.After == AfterPreviousCall:
		prev := &p.steps[i-1]
		ev := prev.returned
		if st.After == AfterPreviousCall {
			ev = prev.called
		}
		select {
		case <-ev:
		case <-ctx.Done():
			return ctx.Err()
		}
		at = prev.ret
		if st.After == AfterPreviousCall {
			at = prev.call
		}
	default:
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

// start begins step i: a fault step here (it returns once the fault's
// window opened), a read of the key here too, a worker's call or write in
// that worker's goroutine, after the worker's earlier steps.
func (p *player) start(ctx, fctx context.Context, i int, st TraceStep) error {
	run := &p.steps[i]
	switch st.Kind {
	case StepFault:
		err := p.inject(ctx, fctx, i, st)
		if err == nil {
			run.call = p.sc.Rec.Faults()[p.windows[i]].Start
			run.ret = run.call
			close(run.called)
			close(run.returned)
		}
		return err
	case StepObserve:
		run.call = p.sc.Rec.Now()
		close(run.called)
		p.sc.Observe(ctx, p.tr.Key)
		run.ret = p.sc.Rec.Now()
		close(run.returned)
		return nil
	}
	p.busy.Add(1)
	p.queues[st.Worker] <- func() {
		defer p.busy.Done()
		p.do(ctx, run, st)
	}
	return nil
}

// do runs a worker's step, in its goroutine.
func (p *player) do(ctx context.Context, run *stepRun, st TraceStep) {
	key, ttl, w := p.tr.Key, p.s.TTL, st.Worker
	if st.PauseMs > 0 {
		// taken once, by the first attempt, inside the client's call
		ctx = lockclient.WithPause(ctx, &lockclient.Pause{For: time.Duration(st.PauseMs) * time.Millisecond})
	}
	run.call = p.sc.Rec.Now()
	close(run.called)
	defer func() {
		run.ret = p.sc.Rec.Now()
		close(run.returned)
	}()
	switch st.Kind {
	case StepAcquire:
		first := p.sc.Acquire(ctx, w, key, ttl)
		r := first
		for st.Granted && unanswered(r) && time.Duration(p.sc.Rec.Now()-first.Call) < ttl && pace.Sleep(ctx, retryEvery) {
			r = p.sc.Acquire(ctx, w, key, ttl)
		}
		p.held[w] = r
	case StepExtend:
		p.sc.Extend(ctx, w, key, p.held[w].Token, ttl)
	case StepRelease:
		p.sc.Release(ctx, w, key, p.held[w].Token)
	case StepWrite:
		p.sc.Write(w, key, p.held[w])
	}
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
	before := len(p.sc.Rec.Faults())
	// A fault that strikes after an acquire (clock-jump) began, in the
	// run, right after the acquire before it: that acquire is the one it
	// waits for. Otherwise it waits for the next one.
	from := p.sc.Rec.Now()
	if i > 0 && p.tr.Steps[i-1].Kind == StepAcquire {
		<-p.steps[i-1].called
		from = p.steps[i-1].call
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
