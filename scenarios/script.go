package scenarios

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"time"

	"github.com/lockcheck/lockcheck/history"
	"github.com/lockcheck/lockcheck/scenarios/fault"
	"github.com/lockcheck/lockcheck/scenarios/internal/pace"
	"github.com/lockcheck/lockcheck/scenarios/lockclient"
	"github.com/lockcheck/lockcheck/topology"
)

// Script drives one interleaving of lock calls step by step, for specs that
// must show a bug the same way on every machine. A randomized workload
// exposes a bug when the machine's timing happens to line its steps up; a
// script lines them up itself: each call runs after the one before it
// returned, and a step that must come after a lease ended waits for the
// server to say the key is gone (AwaitGone) instead of sleeping for a
// guessed time. Every call is recorded as the workload records it, so the
// checker judges a script's history like any other and is never told
// which client ran.
type Script struct {
	Topo *topology.Topology
	Rec  *history.Recorder
	// Res is the protected resource; fenced when the first worker's kind
	// draws fences.
	Res     *Resource
	workers []scriptWorker
	// observer is the client id of the script's own reads of the key.
	observer int
}

// Step is one recorded lock call of a script: what the client reported,
// and when it was called and returned on the recorder's clock.
type Step struct {
	lockclient.Result
	Call, Return int64
}

type scriptWorker struct {
	client lockclient.Client
	// cid is the porcupine client id; it changes after every Unknown.
	cid int
}

// NewScript builds one worker per kind, each with its own client on t;
// configure, when set, adjusts worker i's client configuration (a
// mutant's FenceGap or MidOp). The first kind names the history's client.
func NewScript(t *topology.Topology, kinds []string, configure func(worker int, cfg *lockclient.Config)) (*Script, error) {
	if len(kinds) == 0 {
		return nil, fmt.Errorf("script: no worker")
	}
	rec := history.NewRecorder()
	s := &Script{Topo: t, Rec: rec, Res: NewResource(rec, lockclient.DrawsFences(kinds[0]), 0), observer: rec.NewClient()}
	for _, kind := range kinds {
		if _, err := s.AddWorker(kind, configure); err != nil {
			s.Close()
			return nil, err
		}
	}
	return s, nil
}

// AddWorker builds one more worker of kind, numbered after the others, as
// NewScript builds each, and returns its number. Its client is made now:
// in a cluster it learns the slots' owners as they are now, where a
// client made before a slot moved keeps the old owner until it refreshes
// its map at a moment of its own choosing.
func (s *Script) AddWorker(kind string, configure func(worker int, cfg *lockclient.Config)) (int, error) {
	i := len(s.workers)
	cfg := lockclient.ConfigFor(s.Topo)
	cfg.ID, cfg.Clock = i, s.Rec.Now
	// A call that times out is an Unknown, which a script cannot build
	// on: the budget is long next to any answer a server gives.
	cfg.Timeout = 10 * time.Second
	if configure != nil {
		configure(i, &cfg)
	}
	c, err := lockclient.NewClient(kind, cfg)
	if err != nil {
		return 0, fmt.Errorf("script: worker %d: %w", i, err)
	}
	s.workers = append(s.workers, scriptWorker{client: c, cid: s.Rec.NewClient()})
	return i, nil
}

// Close closes every worker's client.
func (s *Script) Close() {
	for _, w := range s.workers {
		w.client.Close()
	}
}

// Acquire has worker w take key for ttl.
func (s *Script) Acquire(ctx context.Context, w int, key string, ttl time.Duration) Step {
	return s.call(w, history.Acquire, key, "", ttl, func() lockclient.Result { return s.workers[w].client.Acquire(ctx, key, ttl) })
}

// AcquireWithin retries worker w's acquire every 20 ms until it holds key
// or limit passed, recording every attempt: after a failover the topology
// answers errors until a new primary serves, and the script's next step
// needs the lock, not a guess at when that is.
func (s *Script) AcquireWithin(ctx context.Context, w int, key string, ttl, limit time.Duration) Step {
	deadline := time.Now().Add(limit)
	for {
		r := s.Acquire(ctx, w, key, ttl)
		if r.Outcome == history.OK || time.Now().After(deadline) || !pace.Sleep(ctx, 20*time.Millisecond) {
			return r
		}
	}
}

// Extend has worker w extend the acquisition that returned token.
func (s *Script) Extend(ctx context.Context, w int, key, token string, ttl time.Duration) Step {
	return s.call(w, history.Extend, key, token, ttl, func() lockclient.Result { return s.workers[w].client.Extend(ctx, key, token, ttl) })
}

// Release has worker w release the acquisition that returned token.
func (s *Script) Release(ctx context.Context, w int, key, token string) Step {
	return s.call(w, history.Release, key, token, 0, func() lockclient.Result { return s.workers[w].client.Release(ctx, key, token) })
}

// Write is worker w's write to the resource as the holder of held; it
// says whether the resource accepted it.
func (s *Script) Write(w int, key string, held Step) bool {
	return s.BeginWrite(w, key, held)()
}

// BeginWrite starts worker w's write and returns the function that
// finishes it: an unfenced write reads the counter now and writes when
// finished, so a script can freeze a holder in the middle of its
// read-modify-write.
func (s *Script) BeginWrite(w int, key string, held Step) (finish func() bool) {
	return s.Res.Begin(Write{Client: s.workers[w].cid, Worker: w, Key: key, Token: held.Token, Fence: held.Fence, HasFence: held.HasFence})
}

// Counts are worker w's client's own counters (NOSCRIPT fallbacks), if it
// keeps any.
func (s *Script) Counts(w int) map[string]int64 {
	if c, ok := s.workers[w].client.(interface{ Counts() map[string]int64 }); ok {
		return c.Counts()
	}
	return nil
}

// Observe reads key's PTTL on its primary now and records it (-2: no key,
// -1: no expiry).
func (s *Script) Observe(ctx context.Context, key string) (int64, error) {
	pttl, err := s.pttl(ctx, key)
	if err != nil {
		return 0, fmt.Errorf("observe %s: %w", key, err)
	}
	return pttl, nil
}

// AwaitGone waits until key's primary says key is gone (its lease ended
// on the server), polling every 5 ms; only the observation that found it
// gone is recorded. It fails after limit.
func (s *Script) AwaitGone(ctx context.Context, key string, limit time.Duration) error {
	var pttl int64
	var err error
	found := pace.Poll(ctx, limit, 5*time.Millisecond, func() bool {
		call := s.Rec.Now()
		pttl, err = s.read(ctx, key)
		if err == nil && pttl == -2 {
			s.Rec.Add(s.observed(key, call, pttl, nil))
			return true
		}
		return false
	})
	if found == pace.ErrLimit {
		return fmt.Errorf("%s still there %s later (PTTL %d, %v)", key, limit, pttl, err)
	}
	return found
}

// pttl reads and records one observation of key.
func (s *Script) pttl(ctx context.Context, key string) (int64, error) {
	call := s.Rec.Now()
	pttl, err := s.read(ctx, key)
	s.Rec.Add(s.observed(key, call, pttl, err))
	return pttl, err
}

func (s *Script) read(ctx context.Context, key string) (int64, error) {
	p, err := s.Topo.Primary(ctx, key)
	if err != nil {
		return 0, err
	}
	reply, err := p.Do(ctx, "PTTL", key)
	if err != nil {
		return 0, err
	}
	return strconv.ParseInt(reply, 10, 64)
}

// observed is the history's record of one read of key's PTTL.
func (s *Script) observed(key string, call, pttl int64, err error) history.Op {
	return observeOp(s.observer, key, call, s.Rec.Now(), pttl, "", err)
}

// SleepPast sleeps until at least d after the instant at (on the
// recorder's clock). A script uses it only where a later wake-up changes
// nothing, never to guess when something else happened.
func (s *Script) SleepPast(ctx context.Context, at int64, d time.Duration) {
	pace.Sleep(ctx, time.Duration(at)+d-time.Duration(s.Rec.Now()))
}

// FaultEnv is the environment for injecting a fault by hand at one key:
// the fault waits for acquires called from now on.
func (s *Script) FaultEnv(key string, ttl time.Duration) fault.Env {
	return fault.Env{Topo: s.Topo, Rec: s.Rec, TTL: ttl, Key: key, From: s.Rec.Now(), Log: slog.New(slog.DiscardHandler)}
}

// AwaitFault waits until a fault window named name has opened in the
// history (a fault opens it once its preparation is in place), or limit
// passed.
func (s *Script) AwaitFault(ctx context.Context, name string, limit time.Duration) error {
	err := pace.Poll(ctx, limit, 5*time.Millisecond, func() bool {
		return slices.ContainsFunc(s.Rec.History(history.Meta{}).Faults, func(f history.Fault) bool { return f.Name == name })
	})
	if err == pace.ErrLimit {
		return fmt.Errorf("fault %s did not start within %s", name, limit)
	}
	return err
}

// History is what the script recorded, with the run's meta.
func (s *Script) History() *history.History {
	t := s.Topo
	return s.Rec.History(history.Meta{Server: t.Build.Name, Version: t.Version, Topology: string(t.Kind),
		Client: s.workers[0].client.Name(), Clients: len(s.workers), Keys: 1, Fenced: s.Res.Fenced()})
}

// call runs one lock call of worker w and records it as the workload does.
func (s *Script) call(w int, kind history.Kind, key, token string, ttl time.Duration, f func() lockclient.Result) Step {
	wk := &s.workers[w]
	call := s.Rec.Begin(wk.cid)
	r := f()
	op := lockOp(wk.cid, w, kind, key, token, ttl, r, call, s.Rec.Now())
	s.Rec.Add(op)
	if r.Outcome == history.Unknown {
		wk.cid = s.Rec.NewClient()
	}
	return Step{Result: r, Call: op.Call, Return: op.Return}
}
