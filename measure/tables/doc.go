// Package tables are the measurements whose figures go into the README
// and docs: the catch rates of the mutants, the false alarms of the
// correct clients, and the claims about Redlock with the mitigations of
// its failover race. Each is a plan of runs and the function that
// measures one item of it; measure runs the plan (a few lanes at once,
// sharded or not) and each table's file is rewritten after every item.
// Every run goes through harness's one run path (harness.Execute,
// harness.ExecuteOn) as a counted run.
package tables
