// Package measure runs a measurement's plan: a list of items, each
// measured by a function of the caller's, a few at once, with one
// progress line per step, the machine the figures were measured on, the
// table rewritten after every item so that an interrupted measurement
// leaves what finished, and a plan split into shards (--shard I/N) that
// Merge joins again. It knows nothing of servers or locks: the matrix
// (harness) and the measurement tables (measure/tables) are its callers.
package measure
