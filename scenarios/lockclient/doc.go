// Package lockclient holds the lock clients a run drives: the native
// commands (SET NX PX, SET IFEQ, DELIFEQ), the fenced client, DELEX, the
// Lua-era scripts, the deliberate mutants, adapters for real libraries and
// the external adapter protocol. Each reports what it learned of one lock
// call (ok, fail or unknown) and nothing else: the workload records it and
// the checker judges it. Probe and Capabilities say which kinds a build
// can run; Register adds a kind without forking lockcheck.
package lockclient
