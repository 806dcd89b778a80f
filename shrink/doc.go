// Package shrink cuts a violated run down to a reproducer a bug report
// can quote: first a smaller scenario (Cuts: a shorter lease and run,
// the workload's noise off, fewer clients, keys and fault steps), then
// the script form (a scenarios.Trace of only the steps around the
// violation), each cut kept when its re-runs all still show the same
// finding kind, and the smallest kept confirmed by replays.
//
// It is a package of its own, above harness, because it is a search over
// many runs rather than a run: every try goes through the one run path
// (harness.Execute, harness.ExecuteTrace), and harness never needs the
// shrinker. What a shrink writes, shrink.json, and its tables are
// presentation and stay in reports (reports.Shrunk).
package shrink
