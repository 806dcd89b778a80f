package fault

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/lockcheck/lockcheck/scenarios/internal/pace"
	"github.com/lockcheck/lockcheck/topology"
)

// SlowReplication stalls the replication of the key's primary for 3 s:
// its replicas drop the primary's packets (and the primary theirs), while
// clients and sentinels still reach the primary. The stall is shorter
// than every detection timeout here (Sentinel's down-after, the
// replicas' repl-timeout), so nothing fails over and the link resumes
// where it stopped: what it shows is WAIT. A lock acquired in the window
// is on the primary alone, and WAIT 1 after it answers 0 once its timeout
// runs out; the client's WAIT policy (go on, or give the lock back and
// report the acquire failed) decides what the acquire then reports.
var SlowReplication Fault = slowReplication{faultBase{"slow-replication", replicated, "for 3 s the primary's replicas drop its packets (and it theirs), shorter than any detection timeout: nothing fails over, and WAIT after an acquire falls short"}}

type slowReplication struct{ faultBase }

func (f slowReplication) Inject(ctx context.Context, env Env) (err error) {
	p, err := env.Topo.Primary(ctx, env.Key)
	if err != nil {
		return fmt.Errorf("%s: %w", f.name, err)
	}
	cuts := cutsOf(ctx, env.Topo, p)
	stall := 3 * time.Second
	stalled := cutAll(ctx, cuts)
	defer func() {
		cctx, cancel := cleanup(ctx)
		defer cancel()
		err = errors.Join(err, healAll(cctx, stalled))
	}()
	if len(stalled) < len(cuts) {
		return fmt.Errorf("%s: stalled %d of %d replicas of %s", f.name, len(stalled), len(cuts), p.Name)
	}
	// the window opens once the links are cut: what is acquired in it
	// is on the primary alone
	end := env.window(f.name, p, fmt.Sprintf("replication to %d replicas stalled for %s", len(cuts), stall))
	defer end()
	_ = pace.Hold(ctx, stall) // cut short by ctx: healed all the same
	return nil
}

// PartitionSentinels cuts the sentinels off from the key's primary only,
// for 8 s, longer than their down-after: the primary still serves its clients
// and its replicas, but the sentinels, seeing it down, promote a replica.
// Clients still connected to the old primary write to it until Sentinel
// turns it into a replica after the heal; a lock taken on it meanwhile
// and another taken on the new primary are two holders. (partition-primary
// cuts the primary off from its replicas too.)
var PartitionSentinels Fault = partitionSentinels{faultBase{"partition-sentinels", []topology.Kind{topology.Sentinel}, "for 8 s cuts the sentinels off from the key's primary only: they promote a replica while the old primary still serves its clients, until the heal demotes it"}}

type partitionSentinels struct{ faultBase }

func (f partitionSentinels) Inject(ctx context.Context, env Env) error {
	old, err := env.Topo.Primary(ctx, env.Key)
	if err != nil {
		return fmt.Errorf("%s: %w", f.name, err)
	}
	// long enough for the sentinels to agree it is down and finish a
	// failover (2-3.5 s here) with time left in which both serve
	stall := 8 * time.Second
	if err := old.Cut(ctx, env.Topo.Sentinels()...); err != nil {
		cctx, cancel := cleanup(ctx)
		defer cancel()
		return errors.Join(err, old.Heal(cctx)) // what was cut of it
	}
	end := env.window(f.name, old, "cut off from the sentinels for "+stall.String())
	defer end()
	return holdThenHeal(ctx, env, old, stall)
}
