package checker

import (
	"fmt"
	"slices"

	"github.com/lockcheck/lockcheck/history"
)

// checkDoubleHolders is the double-holder check on one key: its holds
// overlapping, allowed when the options allow double holders.
func checkDoubleHolders(x *keyCheck, out *findings) {
	doubleHolders(x.holds, x.byClient, x.faults, x.opts.AllowDoubleHolders, out)
}

// doubleHolders sweeps a key's holds in start order and reports every pair
// of holds by different workers that overlap. The active set holds only the
// holds still open, so the sweep costs O(n log n) plus the pairs found.
func doubleHolders(holds []Hold, byClient bool, faults faultIndex, allow bool, out *findings) {
	order := make([]int, len(holds))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int {
		switch {
		case holds[a].Start < holds[b].Start:
			return -1
		case holds[a].Start > holds[b].Start:
			return 1
		}
		return a - b
	})
	var active []int
	for _, i := range order {
		cur := &holds[i]
		kept := active[:0]
		for _, a := range active {
			if holds[a].End > cur.Start {
				kept = append(kept, a)
			}
		}
		active = kept
		for _, a := range active {
			prev := &holds[a]
			if holder(prev, byClient) == holder(cur, byClient) {
				continue
			}
			from, to := cur.Start, min(prev.End, cur.End)
			if to <= from {
				continue
			}
			out.add(Finding{
				Kind:      KindDoubleHolder,
				Key:       cur.Key,
				Summary:   fmt.Sprintf("%s held by worker %d and worker %d at once for %.3f ms", cur.Key, prev.Worker, cur.Worker, float64(to-from)/1e6),
				Start:     from,
				End:       to,
				OverlapMs: float64(to-from) / 1e6,
				Holds:     []Hold{*prev, *cur},
				Faults:    faults.during(from, to),
				Allowed:   allow,
			})
		}
		if cur.End > cur.Start {
			active = append(active, i)
		}
	}
}

// holder is who a hold belongs to: the worker, which keeps its number when
// an unknown outcome gives it a new client id; histories that never set
// workers fall back to clients.
func holder(h *Hold, byClient bool) int {
	if byClient {
		return h.Client
	}
	return h.Worker
}

// holderOf is holder for the operation that starts or ends a hold.
func holderOf(op *history.Op, byClient bool) int {
	if byClient {
		return op.Client
	}
	return op.Worker
}
