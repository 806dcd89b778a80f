package scenarios

import (
	"fmt"
	"sort"
	"strings"
	"sync/atomic"
	"time"

	"github.com/lockcheck/lockcheck/scenarios/lockclient"
)

// Stats counts what a running workload has done, for a live progress line.
type Stats struct {
	Elapsed       time.Duration
	Ops           int64
	Acquired      int64
	AcquireFailed int64
	Extended      int64
	// LostOnExtend counts nil extends: the holder stopped work.
	LostOnExtend int64
	Released     int64
	// LostOnRelease counts releases that found the lock gone (0): the TTL
	// ran out during the work, and another client may have done it too.
	LostOnRelease  int64
	Unknown        int64
	Writes         int64
	WritesRejected int64
	Stalls         int64
	// QuietStalls counts the stalls during which the others' acquires of
	// the key waited (see Workload.QuietStallRate).
	QuietStalls int64
	// Pauses counts lock calls frozen inside (see Workload.PauseRate).
	Pauses int64
	// LateReplies counts lock calls whose reply was held back past the
	// call timeout (see Workload.LateReplyRate).
	LateReplies int64
	Abandoned   int64
	// Client adds the clients' own counters, summed over workers
	// (short_waits, noscript_fallbacks, adapter_restarts).
	Client map[string]int64
}

// String is a one-line summary.
func (s Stats) String() string {
	line := fmt.Sprintf("%5.1fs %d ops: acquired %d (refused %d), extended %d (lost %d), released %d (lost %d), unknown %d, writes %d (rejected %d), stalls %d (quiet %d), pauses %d, late replies %d, abandoned %d",
		s.Elapsed.Seconds(), s.Ops, s.Acquired, s.AcquireFailed, s.Extended, s.LostOnExtend, s.Released, s.LostOnRelease,
		s.Unknown, s.Writes, s.WritesRejected, s.Stalls, s.QuietStalls, s.Pauses, s.LateReplies, s.Abandoned)
	var names []string
	for k := range s.Client {
		names = append(names, k)
	}
	sort.Strings(names)
	var extra []string
	for _, k := range names {
		extra = append(extra, fmt.Sprintf("%s %d", k, s.Client[k]))
	}
	if len(extra) > 0 {
		line += ", " + strings.Join(extra, ", ")
	}
	return line
}

// counters are the live Stats, updated by every worker.
type counters struct {
	ops, acquired, acquireFailed, extended, lostOnExtend, released, lostOnRelease atomic.Int64
	unknown, writes, writesRejected, stalls, quietStalls, pauses, lateReplies     atomic.Int64
	abandoned                                                                     atomic.Int64
}

// counted is a client that keeps counters of its own.
type counted interface{ Counts() map[string]int64 }

func (c *counters) snapshot(elapsed time.Duration, clients []lockclient.Client) Stats {
	s := Stats{Elapsed: elapsed, Ops: c.ops.Load(), Acquired: c.acquired.Load(), AcquireFailed: c.acquireFailed.Load(),
		Extended: c.extended.Load(), LostOnExtend: c.lostOnExtend.Load(), Released: c.released.Load(),
		LostOnRelease: c.lostOnRelease.Load(), Unknown: c.unknown.Load(), Writes: c.writes.Load(),
		WritesRejected: c.writesRejected.Load(), Stalls: c.stalls.Load(), QuietStalls: c.quietStalls.Load(), Pauses: c.pauses.Load(), LateReplies: c.lateReplies.Load(), Abandoned: c.abandoned.Load()}
	for _, cl := range clients {
		if cc, ok := cl.(counted); ok {
			for k, v := range cc.Counts() {
				if s.Client == nil {
					s.Client = map[string]int64{}
				}
				s.Client[k] += v
			}
		}
	}
	return s
}
