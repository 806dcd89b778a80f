package scenarios

import (
	"fmt"

	"github.com/lockcheck/lockcheck/scenarios/fault"
	"github.com/lockcheck/lockcheck/topology"
)

// Servers is what topology.Start needs to bring up s's servers: the
// build, and the options for the rest (nodes, AOF, the configuration
// lines, the node and reinstall builds whose images it obtains, the
// client proxy its faults need), images found through src. s is
// resolved. Knowing this here keeps the run path one call from a
// Scenario to a started topology.
func (s Scenario) Servers(src topology.Sources) (topology.Build, []topology.Option, error) {
	b, err := src.Lookup(s.Server)
	if err != nil {
		return b, nil, err
	}
	opts := []topology.Option{
		topology.WithOptions(topology.Options{AOF: s.AOF, Fsync: s.Fsync, Nodes: s.Nodes, ServerConfig: s.ServerConfig(), NodeConfig: s.NodeConfig,
			ProxyClients: fault.NeedsClientProxy(s.Faults)}),
		topology.WithSources(src),
	}
	for node, name := range s.NodeBuilds {
		nb, err := src.Lookup(name)
		if err != nil {
			return b, nil, fmt.Errorf("node %s: %w", node, err)
		}
		opts = append(opts, topology.WithNodeBuild(node, nb))
	}
	if s.UpgradeTo != "" {
		ub, err := src.Lookup(s.UpgradeTo)
		if err != nil {
			return b, nil, fmt.Errorf("upgrade to %s: %w", s.UpgradeTo, err)
		}
		opts = append(opts, topology.WithReinstallBuild(ub))
	}
	return b, opts, nil
}
