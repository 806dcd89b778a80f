package fault

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/lockcheck/lockcheck/scenarios/internal/pace"
)

// Freezer reaches the workload's lock holders from a fault. It freezes
// them in two ways:
//   - a pause of fixed length, handed to the first holder that asks for it
//     between two steps of its work or as it calls extend or release: the
//     pause-client fault, as a long garbage-collection pause would;
//   - a hold of the next holder whose acquire succeeds, kept until the
//     fault lets go: kill-primary and clock-jump hold the first holder of
//     their race before its next call or write, so that it still believes
//     when a second worker takes the same lock, however the machine's
//     timing goes (see race).
//
// While a hold is armed or kept, acquires run without the plan's pause
// inside them (Racing): the race's acquires return as soon as the server
// answers, or a frozen acquire would return after the lease it took.
type Freezer struct {
	pending atomic.Int64
	taken   chan int

	mu    sync.Mutex
	armed bool
	// arming is closed when a hold is armed, and replaced once it is not.
	arming chan struct{}
	held   map[int]chan struct{}
	landed chan int
}

// NewFreezer makes a Freezer with no pause pending and no hold.
func NewFreezer() *Freezer {
	return &Freezer{taken: make(chan int, 1), held: map[int]chan struct{}{}, landed: make(chan int, 1)}
}

// request offers a pause of d to the next holder.
func (f *Freezer) request(d time.Duration) { f.pending.Store(int64(d)) }

// cancel withdraws a pause nobody took.
func (f *Freezer) cancel() { f.pending.Store(0) }

// Take returns the pending pause, once, to the worker that asks first.
func (f *Freezer) Take(worker int) time.Duration {
	if f == nil {
		return 0
	}
	d := f.pending.Swap(0)
	if d > 0 {
		select {
		case f.taken <- worker:
		default:
		}
	}
	return time.Duration(d)
}

// arm makes the next worker to report an acquire (Landed) held.
func (f *Freezer) arm() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.armed {
		return
	}
	f.armed = true
	close(f.armingLocked())
	select { // a worker landed before and let go since is no news
	case <-f.landed:
	default:
	}
}

// disarm withdraws an armed hold nobody took.
func (f *Freezer) disarm() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.disarmLocked()
}

func (f *Freezer) disarmLocked() {
	if f.armed {
		f.armed = false
		f.arming = nil
	}
}

// armingLocked is f.arming, made on first use; f.mu is held.
func (f *Freezer) armingLocked() chan struct{} {
	if f.arming == nil {
		f.arming = make(chan struct{})
	}
	return f.arming
}

// Armed closes when a hold is armed: an acquire frozen inside its call by
// the plan wakes then (lockclient.Pause.Cut), or the race's lock would be
// taken by a call that returns a lease later. A nil Freezer's never
// closes.
func (f *Freezer) Armed() <-chan struct{} {
	if f == nil {
		return nil
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.armingLocked()
}

// Landed tells the Freezer that worker's acquire returned OK. With a hold
// armed, the worker is held from now on, until the fault lets it go.
func (f *Freezer) Landed(worker int) {
	if f == nil {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.armed {
		return
	}
	f.disarmLocked()
	f.held[worker] = make(chan struct{})
	f.landed <- worker
}

// awaitLanded waits for the worker an armed hold caught, or limit.
func (f *Freezer) awaitLanded(ctx context.Context, limit time.Duration) (int, bool) {
	select {
	case w := <-f.landed:
		return w, true
	case <-time.After(limit):
	case <-ctx.Done():
	}
	f.disarm()
	select { // caught just as the wait ended
	case w := <-f.landed:
		return w, true
	default:
		return 0, false
	}
}

// release lets a held worker go on.
func (f *Freezer) release(worker int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if ch, ok := f.held[worker]; ok {
		close(ch)
		delete(f.held, worker)
	}
}

// Wait returns once worker is not held, or done closes (its run is over):
// a holder calls it before each lock call and write.
func (f *Freezer) Wait(worker int, done <-chan struct{}) {
	if f == nil {
		return
	}
	f.mu.Lock()
	ch := f.held[worker]
	f.mu.Unlock()
	if ch != nil {
		select {
		case <-ch:
		case <-done:
		}
	}
}

// Racing says a hold is armed or kept: the workload's acquires then skip
// their planned pause.
func (f *Freezer) Racing() bool {
	if f == nil {
		return false
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.armed || len(f.held) > 0
}

// PauseClient freezes one lock holder for twice the TTL in the middle of
// its work or inside its extend or release (between the commands of a
// client that takes two, after the reply of one that takes one, an
// adapter stopped mid-request): its lease runs out, another client takes
// the lock, and the frozen one wakes up and goes on, believing it still
// holds. Only a fence checked by the resource stops its write.
var PauseClient Fault = pauseClient{faultBase{"pause-client", anyKind, "freezes one lock holder for 2 TTL mid-work or inside its extend or release, then lets it go on believing it holds"}}

type pauseClient struct{ faultBase }

func (f pauseClient) Inject(ctx context.Context, env Env) error {
	if env.Freezer == nil {
		return fmt.Errorf("pause-client: the workload has no freezer")
	}
	pause := 2 * env.TTL
	win, end := env.openWindow(f.name, nil, "a holder frozen for "+pause.String())
	defer end()
	env.Freezer.request(pause)
	select {
	case w := <-env.Freezer.taken:
		env.Rec.FaultTarget(win, fmt.Sprintf("worker %d", w), "worker frozen mid-work or inside a lock call for "+pause.String())
	case <-time.After(4 * env.TTL):
		env.Freezer.cancel()
		return fmt.Errorf("pause-client: no holder took the pause within %s", 4*env.TTL)
	case <-ctx.Done():
		env.Freezer.cancel()
		return nil
	}
	pace.Hold(ctx, pause)
	return nil
}

// NeedsWorkload says whether fault name acts on the workload's holders
// rather than on the servers: pause-client freezes a holder through the
// workload's Freezer. A script has no workload to freeze; a trace plays
// such a pause as the delay between the frozen holder's steps.
func NeedsWorkload(name string) bool { return name == PauseClient.Name() }
