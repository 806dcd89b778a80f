// Package harness joins the other packages into what a user runs: a chaos
// run on a started topology (workload and faults from scenarios, the
// history checked by checker, the run's folder written by reports) and a
// matrix of such runs, each on a fresh topology. The command line parses
// flags into these types and prints what they return; the suites call the
// packages below directly.
package harness
