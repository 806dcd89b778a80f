package fault

import (
	"context"
	"fmt"
	"time"

	"github.com/lockcheck/lockcheck/history"
	"github.com/lockcheck/lockcheck/scenarios/internal/pace"
	"github.com/lockcheck/lockcheck/topology"
)

// ClockJump moves the key's primary's wall clock forward by twice the TTL
// right after a client acquired a lock on that primary: every lease on it
// expires at once, while its holder still believes it holds. The holder is
// held before its next call (race) until another worker, finding the lock
// free, has taken it, or until its lease ends; then the clock goes back. A
// lease set after the jump is measured on the jumped clock and does not
// end early. When no acquire lands on the primary, or no second worker
// takes the lock within the first one's lease, the fault window says so
// (Unmet). Without a workload to hold (a script), the clock stays jumped
// for max(2 TTL, 2 s). Stopped early (ctx ended), it puts the clock back
// and returns nil.
var ClockJump Fault = clockJump{faultBase{"clock-jump", anyKind, "moves the key's primary's wall clock forward by 2 TTL right after an acquire there, so its leases end at once, and holds that holder until a second one takes the lock (at most its lease); then the clock goes back"}}

type clockJump struct{ faultBase }

func (f clockJump) Inject(ctx context.Context, env Env) error {
	p, err := env.Topo.Primary(ctx, env.Key)
	if err != nil {
		return fmt.Errorf("clock-jump: %w", err)
	}
	jump := 2 * env.TTL
	onPrimary := func(key string) bool {
		q, err := env.Topo.Primary(ctx, key)
		return err == nil && q == p
	}
	limit := max(2*env.TTL, 5*time.Second)
	r := newRace(env)
	if r == nil {
		awaitAcquire(ctx, env, onPrimary, limit)
	}
	defer r.done()
	if r != nil && !r.catch(ctx, func(op history.Op) bool { return onPrimary(op.Key) }, limit) {
		win, end := env.openWindow(f.name, p, "+"+jump.String())
		defer end()
		if ctx.Err() == nil {
			env.unmet(win, "no acquire landed on %s within %s", p.Name, limit)
		}
		return nil
	}
	win, end := env.openWindow(f.name, p, "+"+jump.String())
	defer end()
	defer resetClock(ctx, p)
	if err := p.SetClockOffset(ctx, jump); err != nil && ctx.Err() == nil {
		return err
	}
	if r == nil {
		pace.Hold(ctx, max(2*env.TTL, 2*time.Second))
		return nil
	}
	if waited, ok := r.second(ctx); !ok && ctx.Err() == nil {
		env.unmet(win, "no other worker took %s within the first holder's lease (%s after the jump)", r.first.Key, waited.Round(100*time.Millisecond))
	}
	// The second holder's lease was set on the jumped clock: a moment
	// more on it, then the clock goes back.
	pace.Hold(ctx, time.Second)
	return nil
}

// ClockStrobe makes the key's primary's clock oscillate: forward past the
// TTL, back to true, behind, and true again, every quarter second.
var ClockStrobe Fault = clockStrobe{faultBase{"clock-strobe", anyKind, "cycles the key's primary's clock offset through +1.5 TTL, 0, -TTL/2, 0 every 250 ms for max(3 TTL, 3 s); then the clock goes back"}}

type clockStrobe struct{ faultBase }

func (f clockStrobe) Inject(ctx context.Context, env Env) error {
	p, err := env.Topo.Primary(ctx, env.Key)
	if err != nil {
		return fmt.Errorf("clock-strobe: %w", err)
	}
	steps := []time.Duration{env.TTL * 3 / 2, 0, -env.TTL / 2, 0}
	end := env.window(f.name, p, fmt.Sprintf("offsets %v every 250ms", steps))
	defer end()
	defer resetClock(ctx, p)
	until := time.Now().Add(max(3*env.TTL, 3*time.Second))
	for i := 0; time.Now().Before(until); i++ {
		if err := p.SetClockOffset(ctx, steps[i%len(steps)]); err != nil {
			return err
		}
		if pace.Hold(ctx, 250*time.Millisecond) != nil {
			return nil
		}
	}
	return nil
}

func resetClock(ctx context.Context, n *topology.Node) {
	cctx, cancel := cleanup(ctx)
	defer cancel()
	n.SetClockOffset(cctx, 0)
}

// ScriptFlush empties the script cache on every server, as a restart or a
// failover does: EVALSHA answers NOSCRIPT until a script is loaded again.
var ScriptFlush Fault = scriptFlush{faultBase{"script-flush", anyKind, "SCRIPT FLUSH on every server, as a restart or failover empties the script cache: EVALSHA answers NOSCRIPT"}}

type scriptFlush struct{ faultBase }

func (f scriptFlush) Inject(ctx context.Context, env Env) error {
	end := env.window(f.name, nil, "SCRIPT FLUSH on every server")
	defer end()
	for _, n := range env.Topo.Servers() {
		if _, err := n.Do(ctx, "SCRIPT", "FLUSH"); err != nil {
			return fmt.Errorf("script-flush: %w", err)
		}
	}
	return nil
}
