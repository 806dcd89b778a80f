// Package scenarios drives lock workloads against a topology and produces
// a history. A Scenario is every input of one run, in five parts, with
// one table of settings (Settings; settings.go says how to add one); the
// workload decides from its seed what each worker does with the lock
// clients of lockclient, writes to the protected resource, and runs the
// faults of fault on their schedule (Chaos). Script drives one
// interleaving by hand for a test. It records what clients reported and
// what the resource saw, and decides no verdict: that is the checker's.
package scenarios
