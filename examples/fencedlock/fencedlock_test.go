package fencedlock_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/valkey-io/valkey-go"

	"github.com/lockcheck/lockcheck/examples/fencedlock"
	"github.com/lockcheck/lockcheck/locktest"
)

// The library's gates: safe without faults, even with holders that stall
// past their lease (the fence turns their writes away), and the fence
// holds when the primary dies under a held lock. Each ends once it has
// covered its goal (UntilCovered), its duration only the bound.
func TestFencedLock(t *testing.T) {
	env := locktest.New(t)
	t.Run("no faults", func(t *testing.T) {
		env.Run(t, stalls, newAdapter(false), locktest.ExpectSafe)
	})
	t.Run("kill-primary", func(t *testing.T) {
		env.Run(t, locktest.Scenario{
			ServerSettings:  locktest.ServerSettings{Server: "valkey-9.1", Topology: "sentinel"},
			ClientSettings:  locktest.ClientSettings{Fenced: true},
			FaultSettings:   locktest.FaultSettings{Faults: []string{"kill-primary"}},
			TrafficSettings: locktest.TrafficSettings{Duration: 16 * time.Second, TTL: 5 * time.Second, Seed: 1, UntilCovered: true},
		}, newAdapter(false), locktest.ExpectFenceHolds)
	})
}

// A copy of the library whose release is a plain DEL fails the same gate,
// with the check that caught it named: a holder that stalled past its
// lease deletes the next holder's lock, and a third client takes it while
// the second still holds it.
func TestBrokenReleaseFails(t *testing.T) {
	rec := &failures{TB: t}
	// the whole duration: this test is about the check that catches it,
	// not about how soon
	full := stalls
	full.UntilCovered = false
	locktest.Run(rec, full, newAdapter(true), locktest.ExpectSafe)
	if len(rec.errors) == 0 {
		t.Fatal("locktest passed a library that releases with a plain DEL")
	}
	msg := strings.Join(rec.errors, "\n")
	if !strings.Contains(msg, "double_holder") && !strings.Contains(msg, "fence fail") && !strings.Contains(msg, "linearizability") {
		t.Errorf("the failure does not name the check that caught the plain DEL:\n%s", msg)
	}
	t.Logf("as expected, locktest failed the broken copy:\n%s", msg)
}

// stalls is the no-fault scenario: four clients on one key with 1 s
// leases, half the holders stalling 1.2-2 leases somewhere in their hold
// and a tenth frozen inside a lock call.
var stalls = locktest.Scenario{
	ServerSettings:  locktest.ServerSettings{Server: "valkey-9.1", Topology: "standalone"},
	ClientSettings:  locktest.ClientSettings{Fenced: true},
	TrafficSettings: locktest.TrafficSettings{Duration: 12 * time.Second, Seed: 1, UntilCovered: true, Clients: 4, Keys: 1, TTL: time.Second, StallRate: 0.5, PauseRate: 0.1, WorkMin: 50 * time.Millisecond, WorkMax: 300 * time.Millisecond},
}

// adapter maps the library's calls and errors onto locktest's client:
// ErrTaken, ErrLost and error replies are definite failures, anything
// else (a timeout, a broken connection) may have happened.
type adapter struct {
	c        valkey.Client
	timeout  time.Duration
	plainDEL bool
	mu       sync.Mutex
	held     map[string]*fencedlock.Lock
}

func newAdapter(plainDEL bool) locktest.NewClient {
	return func(cfg locktest.Config) (locktest.Client, error) {
		c, err := valkey.NewClient(cfg.Option)
		if err != nil {
			return nil, err
		}
		return &adapter{c: c, timeout: cfg.Timeout, plainDEL: plainDEL, held: map[string]*fencedlock.Lock{}}, nil
	}
}

func (a *adapter) Name() string { return "fencedlock" }

func (a *adapter) Acquire(ctx context.Context, key string, ttl time.Duration) locktest.Result {
	ctx, cancel := context.WithTimeout(ctx, a.timeout)
	defer cancel()
	l, err := fencedlock.Acquire(ctx, a.c, key, ttl)
	if err != nil {
		return outcome(err)
	}
	a.mu.Lock()
	a.held[l.Token] = l
	a.mu.Unlock()
	return locktest.Result{Outcome: locktest.OK, Token: l.Token, Fence: l.Fence, HasFence: true}
}

func (a *adapter) Extend(ctx context.Context, key, token string, ttl time.Duration) locktest.Result {
	ctx, cancel := context.WithTimeout(ctx, a.timeout)
	defer cancel()
	return outcome(a.lock(key, token).Extend(ctx, ttl))
}

func (a *adapter) Release(ctx context.Context, key, token string) locktest.Result {
	ctx, cancel := context.WithTimeout(ctx, a.timeout)
	defer cancel()
	l := a.lock(key, token)
	a.mu.Lock()
	delete(a.held, token)
	a.mu.Unlock()
	if a.plainDEL {
		return outcome(a.c.Do(ctx, a.c.B().Del().Key(l.Key).Build()).Error())
	}
	return outcome(l.Release(ctx))
}

// lock is the acquisition that returned token: the workload extends and
// releases by token, the library by its Lock.
func (a *adapter) lock(key, token string) *fencedlock.Lock {
	a.mu.Lock()
	defer a.mu.Unlock()
	if l := a.held[token]; l != nil {
		return l
	}
	// An acquire whose outcome was unknown: the library's caller would
	// have no Lock for it; its token is what the key holds if it landed.
	return fencedlock.Resume(a.c, key, token)
}

func (a *adapter) Close() error {
	a.c.Close()
	return nil
}

func outcome(err error) locktest.Result {
	if err == nil {
		return locktest.Result{Outcome: locktest.OK}
	}
	if errors.Is(err, fencedlock.ErrTaken) || errors.Is(err, fencedlock.ErrLost) {
		return locktest.Result{Outcome: locktest.Fail, Err: err.Error()}
	}
	if _, ok := valkey.IsValkeyErr(err); ok {
		return locktest.Result{Outcome: locktest.Fail, Err: err.Error()}
	}
	return locktest.Result{Outcome: locktest.Unknown, Err: err.Error()}
}

// failures stands in for a test that is expected to fail: it keeps the
// errors instead of failing the real test. Fatal and Skip still end the
// real one: the harness itself failing is not the failure expected (a
// Fatal ends the test's own goroutine, where Run was called).
type failures struct {
	testing.TB
	mu     sync.Mutex
	errors []string
}

func (f *failures) Errorf(format string, args ...any) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.errors = append(f.errors, fmt.Sprintf(format, args...))
}

func (f *failures) Error(args ...any) { f.Errorf("%s", fmt.Sprint(args...)) }
