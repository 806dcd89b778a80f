package fault

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/lockcheck/lockcheck/scenarios/internal/pace"
)

// Freezer hands a pause to the first lock holder that asks for it, between
// two steps of its work or as it calls extend or release: the pause-client
// fault freezes one holder, as a long garbage-collection pause would, and
// the holder goes on when it wakes up.
type Freezer struct {
	pending atomic.Int64
	taken   chan int
}

// NewFreezer makes a Freezer with no pause pending.
func NewFreezer() *Freezer { return &Freezer{taken: make(chan int, 1)} }

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
