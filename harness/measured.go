package harness

import (
	"context"

	"github.com/lockcheck/lockcheck/checker"
	"github.com/lockcheck/lockcheck/scenarios"
	"github.com/lockcheck/lockcheck/topology"
)

// runMeasured runs one seeded run of a measurement (catch rate, false
// alarms, a claim) on t through the run path (ExecuteOn, Measured) and
// checks its history without drawing a report. The check runs after
// Ctrl-C too: the run finished, and its history counts.
func runMeasured(ctx context.Context, t *topology.Topology, chaos scenarios.Chaos) (*scenarios.ChaosResult, *checker.Result, error) {
	out, err := ExecuteOn(ctx, t, chaos.Workload.Scenario, Options{Measured: true, StderrDir: chaos.StderrDir, Configure: chaos.Configure})
	if err != nil {
		return nil, nil, err
	}
	return &scenarios.ChaosResult{History: out.History, Schedule: out.Schedule, Notes: out.Notes}, out.Check, nil
}
