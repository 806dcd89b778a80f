// Package scenarios drives lock workloads against a topology and produces a
// history: the lock clients (native commands, Lua-era scripts, fenced,
// DELEX, deliberate mutants, adapters for real libraries and external
// processes), the protected resource they write to, and the seeded workload
// that decides what each worker does. It records what clients reported and
// what the resource saw, and decides no verdict: that is the checker's.
package scenarios
