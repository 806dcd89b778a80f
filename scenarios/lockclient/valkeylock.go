package lockclient

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/valkey-io/valkey-go"
	"github.com/valkey-io/valkey-go/valkeylock"

	"github.com/lockcheck/lockcheck/history"
)

// valkeylockClient adapts valkey-go's valkeylock. That library is shaped
// differently: a lock is a context that it keeps alive by extending the key
// every KeyValidity/2 on its own, for as long as the context lives, and
// cancels when it loses the key. So here Extend reports whether the library
// still considers the lock held (its context is live), Release cancels the
// context (the library then deletes the key by script) and reports ok
// unless the lock was already lost, and the token is a per-acquisition id,
// because the library does not expose the value it stores. KeyMajority is
// 1: one key per lock, as the other single-instance clients have; the key
// is valkeylock:0:<name>, whose hash tag is the name's.
//
// A lock the workload neither extends nor releases within its TTL (an
// abandoned hold, a holder stalled past its lease) is cancelled at that
// point, TTL after the start of the last acquire or extend: where every
// other client's lease lapses, and what happens to a crashed holder's lock
// under valkeylock too (its renewals stop). Without it the library renews
// a forgotten lock for as long as the process lives, by design
// (TestValkeylockRenewsAForgottenLock), and the checker, whose leases end
// TTL after the last call, sees a key taken with no holder.
//
// The key lives by the library's renewals, not by the workload's calls, so
// libWatch reports each renewal as the holder's extend, and each delete
// the library runs on its own (at a lapse, or when a renewal fails) as
// its release: the history holds every command that set or ended the
// lease.
type valkeylockClient struct {
	name  string
	cfg   Config
	base  context.Context
	stop  context.CancelFunc
	watch *libWatch

	mu      sync.Mutex
	lockers map[time.Duration]valkeylock.Locker
	held    map[string]heldLock
}

type heldLock struct {
	// val is the value the library stored in the key.
	val    string
	ctx    context.Context
	cancel context.CancelFunc
	// lapse cancels the lock where its lease ends; a call stops and resets
	// it. A stop that finds it fired means the lease ended first.
	lapse *time.Timer
	// lapsed closes once the lapse's cancel returned: the library's
	// delete script has then run.
	lapsed chan struct{}
}

// newHeld starts a hold whose lease ends at end.
func newHeld(val string, ctx context.Context, cancel context.CancelFunc, end time.Time) heldLock {
	h := heldLock{val: val, ctx: ctx, cancel: cancel, lapsed: make(chan struct{})}
	h.lapse = time.AfterFunc(time.Until(end), func() { cancel(); close(h.lapsed) })
	return h
}

// awaitLapse waits (at most d) for a fired lapse's delete: the call that
// finds its lease ended returns once the library has given the key back,
// so that a caller told "lost" does not see the key still taken.
func (h heldLock) awaitLapse(d time.Duration) {
	select {
	case <-h.lapsed:
	case <-time.After(d):
	}
}

func newValkeylock(name string, cfg Config) (Client, error) {
	base, stop := context.WithCancel(context.Background())
	return &valkeylockClient{name: name, cfg: cfg, base: base, stop: stop, watch: newLibWatch(cfg),
		lockers: map[time.Duration]valkeylock.Locker{}, held: map[string]heldLock{}}, nil
}

func (c *valkeylockClient) Name() string { return c.name }

// locker returns the locker for ttl: the library fixes the validity per
// locker, so each TTL gets its own.
func (c *valkeylockClient) locker(ttl time.Duration) (valkeylock.Locker, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if l, ok := c.lockers[ttl]; ok {
		return l, nil
	}
	l, err := valkeylock.NewLocker(valkeylock.LockerOption{
		ClientOption: c.cfg.Option,
		KeyValidity:  ttl,
		KeyMajority:  1,
		// TryNextAfter bounds each acquire attempt; its 20 ms default
		// would turn a busy machine's latency into failed acquires.
		TryNextAfter: c.cfg.Timeout,
		ClientBuilder: func(opt valkey.ClientOption) (valkey.Client, error) {
			cl, err := valkey.NewClient(opt)
			if err != nil {
				return nil, err
			}
			return watchedClient{Client: cl, w: c.watch}, nil
		},
	})
	if err != nil {
		return nil, fmt.Errorf("valkeylock: %w", err)
	}
	c.lockers[ttl] = l
	return l, nil
}

func (c *valkeylockClient) Acquire(ctx context.Context, key string, ttl time.Duration) Result {
	l, err := c.locker(ttl)
	if err != nil {
		return unknownResult(err.Error())
	}
	// The lock's context must outlive this call: it is the lock.
	c.watch.beginAcquire()
	start := time.Now()
	lctx, cancel, err := l.TryWithContext(c.base, key)
	seen := c.watch.acquired()
	if err != nil {
		r := failed("")
		if !errors.Is(err, valkeylock.ErrNotLocked) {
			r = resultOf(ctx, err)
		}
		if !seen.set && seen.del == nil {
			return r
		}
		// the library took the key and gave it back before it returned
		// (an attempt past its time, a reply past its deadline)
		r.Token = newToken()
		return undone(r, seen.del)
	}
	token := newToken()
	c.watch.hold(seen.val, key, token, ttl)
	c.mu.Lock()
	c.held[key+"\x00"+token] = newHeld(seen.val, lctx, cancel, start.Add(ttl))
	c.mu.Unlock()
	return Result{Outcome: history.OK, Token: token}
}

func (c *valkeylockClient) Extend(ctx context.Context, key, token string, ttl time.Duration) Result {
	c.mu.Lock()
	h, ok := c.held[key+"\x00"+token]
	c.mu.Unlock()
	if !ok {
		return failed("valkeylock: no acquisition with this token in this client")
	}
	start := time.Now()
	if !h.lapse.Stop() {
		h.awaitLapse(c.cfg.Timeout)
		return failed("")
	}
	if h.ctx.Err() != nil {
		return failed("")
	}
	h.lapse.Reset(time.Until(start.Add(ttl)))
	return okResult()
}

func (c *valkeylockClient) Release(ctx context.Context, key, token string) Result {
	c.mu.Lock()
	h, ok := c.held[key+"\x00"+token]
	delete(c.held, key+"\x00"+token)
	c.mu.Unlock()
	if !ok {
		return failed("valkeylock: no acquisition with this token in this client")
	}
	lapsed := !h.lapse.Stop()
	if lapsed {
		h.awaitLapse(c.cfg.Timeout)
	}
	lost := lapsed || h.ctx.Err() != nil
	if !lost {
		c.watch.release(h.val)
	}
	// The library's cancel waits for its delete script, which runs without
	// a deadline: bound the wait here.
	done := make(chan struct{})
	go func() { h.cancel(); close(done) }()
	select {
	case <-done:
	case <-time.After(c.cfg.Timeout):
		c.watch.released(h.val)
		return unknownResult(fmt.Sprintf("valkeylock's release did not return within %v", c.cfg.Timeout))
	}
	del := c.watch.released(h.val)
	if lost || del == nil {
		// lost before (its delete, if any, reported aside), or the
		// library found the key not its own at a renewal meanwhile
		return failed("")
	}
	return *del
}

func (c *valkeylockClient) Close() error {
	c.watch.close()
	c.mu.Lock()
	held := c.held
	c.held = map[string]heldLock{}
	lockers := c.lockers
	c.lockers = map[time.Duration]valkeylock.Locker{}
	c.mu.Unlock()
	c.stop()
	// Each cancel waits for the library's delete script; bound the wait
	// for all of them together.
	var wg sync.WaitGroup
	for _, h := range held {
		h.lapse.Stop()
		wg.Go(h.cancel)
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(c.cfg.Timeout):
	}
	for _, l := range lockers {
		l.Close()
	}
	return nil
}
