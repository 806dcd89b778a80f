package harness

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/lockcheck/lockcheck/scenarios"
	"github.com/lockcheck/lockcheck/topology"
)

// StartScenario starts s's topology, obtaining the image of every build
// its nodes run (progress on log); s is resolved. On error nothing is
// left running. A suite, a measurement or a library's test that runs
// many scenarios on one topology starts it here and runs each with
// ExecuteOn.
func StartScenario(ctx context.Context, eng *topology.Engine, s scenarios.Scenario, src topology.Sources, log io.Writer) (*topology.Topology, error) {
	b, opts, err := s.Servers(src)
	if err != nil {
		return nil, err
	}
	return topology.Start(ctx, eng, b, s.Topology, append(opts, topology.WithLog(log))...)
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
