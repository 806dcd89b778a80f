// Package scenarios drives lock workloads against a topology and produces a
// history. A Scenario is every input of one run, with one table of
// defaults; the package holds the lock clients (native commands, Lua-era
// scripts, fenced, DELEX, deliberate mutants, adapters for real libraries
// and external processes), the protected resource they write to, the
// seeded workload that decides what each worker does, and the faults with
// their seeded schedule. It records what clients reported and what the
// resource saw, and decides no verdict: that is the checker's.
package scenarios
