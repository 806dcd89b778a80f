// Package harness joins the other packages into what a user runs. Execute
// is the one run path: a scenarios.Scenario in, a run folder out
// (scenario.json first, then the topology, the workload and its faults,
// the checked history, the reports, the teardown). The command line, the
// matrix (a list of Scenarios, shardable) and the safety suite all go
// through it; Recheck checks a run folder again offline.
package harness
