package harness

import (
	"context"
	"fmt"

	"github.com/lockcheck/lockcheck/checker"
	"github.com/lockcheck/lockcheck/scenarios"
	"github.com/lockcheck/lockcheck/topology"
)

// runMeasured runs one seeded run of a measurement (catch rate, false
// alarms) on t and checks its history without drawing a report. The
// check runs after Ctrl-C too: the run finished, and its history counts.
func runMeasured(ctx context.Context, t *topology.Topology, chaos scenarios.Chaos) (*scenarios.ChaosResult, *checker.Result, error) {
	res, err := chaos.Run(ctx, t)
	if err != nil {
		return nil, nil, err
	}
	opts := CheckOptions(res.History, chaos.Workload.Scenario)
	opts.PictureOps = -1
	result, err := checker.Run(context.WithoutCancel(ctx), res.History, opts)
	if err != nil {
		return res, nil, fmt.Errorf("check: %w", err)
	}
	return res, result, nil
}
