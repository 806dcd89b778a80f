package fault

import (
	"context"
	"fmt"
	"time"

	"github.com/lockcheck/lockcheck/topology"
)

// MixedVersion promotes the one replica that runs an older build (a rolling
// upgrade caught half way): Sentinel is asked to fail over, and the other
// replicas are expected to carry replica-priority 0, so the older node is
// the one it picks. Clients that use commands the old build lacks (DELIFEQ
// on 8.1) then meet unknown-command errors. It returns once the old
// primary serves as a replica.
var MixedVersion Fault = mixedVersion{faultBase{"mixed-version", []topology.Kind{topology.Sentinel}, "SENTINEL FAILOVER onto the one replica on an older build (the others at replica-priority 0): a rolling upgrade caught half way"}}

type mixedVersion struct{ faultBase }

func (f mixedVersion) Inject(ctx context.Context, env Env) error {
	old, err := env.Topo.Primary(ctx, env.Key)
	if err != nil {
		return fmt.Errorf("mixed-version: %w", err)
	}
	end := env.window(f.name, old, "SENTINEL FAILOVER to the older replica")
	defer end()
	if _, err := env.Topo.Sentinels()[0].Do(ctx, "SENTINEL", "FAILOVER", topology.MasterSet); err != nil {
		return fmt.Errorf("mixed-version: %w", err)
	}
	p, err := newPrimary(ctx, env.Topo, env.Key, old, 30*time.Second)
	if err != nil {
		return err
	}
	v, _ := p.Version(ctx)
	env.Log.Info("promoted", "node", p.Name, "version", v)
	// Until the old primary is a replica it still takes writes: a client
	// that has not heard of the switch would go on locking on the newer
	// build.
	cctx, cancel := cleanup(ctx)
	defer cancel()
	return awaitRole(cctx, old, topology.RoleReplica, 30*time.Second)
}
