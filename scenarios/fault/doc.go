// Package fault holds the faults a run injects (killing, pausing and
// partitioning primaries, failovers, clock jumps, SCRIPT FLUSH, a frozen
// lock holder) and the seeded schedule they follow. Each fault records its
// window in the history and leaves the topology able to serve again; the
// mechanism on the nodes is topology's, the timing is here.
package fault
