package harness

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/lockcheck/lockcheck/scenarios"
	"github.com/lockcheck/lockcheck/scenarios/fault"
	"github.com/lockcheck/lockcheck/topology"
)

// Start obtains b's image (building it from Debian's packages when it must,
// with progress on log) and starts kind on it. On error nothing is left
// running.
func Start(ctx context.Context, eng *topology.Engine, b topology.Build, src topology.Sources, kind topology.Kind, opts topology.Options, log io.Writer) (*topology.Topology, error) {
	img, err := eng.Obtain(ctx, b, src, log)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(log, "starting %s %s on %s\n", b.Name, kind, img.Ref)
	return topology.Start(ctx, eng, b, kind, topology.WithImage(img.Ref), topology.WithOptions(opts))
}

// Teardown removes t with a deadline of its own, so that it also runs after
// Ctrl-C cancelled ctx.
func Teardown(ctx context.Context, t *topology.Topology) error {
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
	defer cancel()
	if err := t.Terminate(cctx); err != nil {
		return fmt.Errorf("teardown of %s %s: %w (make clean removes what is left)", t.Build.Name, t.Kind, err)
	}
	return nil
}

// StartScenario obtains the image of every build the scenario's nodes run
// and starts its topology; s is resolved. On error nothing is left
// running.
func StartScenario(ctx context.Context, eng *topology.Engine, s scenarios.Scenario, src topology.Sources, log io.Writer) (*topology.Topology, error) {
	b, err := LookupBuild(s.Server, src)
	if err != nil {
		return nil, err
	}
	opts := topology.Options{AOF: s.AOF, Fsync: s.Fsync, Nodes: s.Nodes, ServerConfig: s.ServerConfig(), NodeConfig: s.NodeConfig, ProxyClients: fault.NeedsClientProxy(s.Faults),
		NodeImages: map[string]string{}, Images: map[string]string{}}
	obtain := func(name string) (string, error) {
		nb, err := LookupBuild(name, src)
		if err != nil {
			return "", err
		}
		img, err := eng.Obtain(ctx, nb, src, log)
		if err != nil {
			return "", err
		}
		return img.Ref, nil
	}
	for node, name := range s.NodeBuilds {
		ref, err := obtain(name)
		if err != nil {
			return nil, fmt.Errorf("node %s: %w", node, err)
		}
		opts.NodeImages[node] = ref
	}
	if s.UpgradeTo != "" {
		ref, err := obtain(s.UpgradeTo)
		if err != nil {
			return nil, fmt.Errorf("upgrade to %s: %w", s.UpgradeTo, err)
		}
		opts.Images[s.UpgradeTo] = ref
	}
	return Start(ctx, eng, b, src, s.Topology, opts, log)
}

// LookupBuild finds a build by name, including a user's own binary's.
func LookupBuild(name string, src topology.Sources) (topology.Build, error) {
	b, err := topology.Lookup(name)
	if err == nil {
		return b, nil
	}
	if _, ok := src.Binaries[name]; ok {
		return topology.CustomBuild(name), nil
	}
	return b, err
}
