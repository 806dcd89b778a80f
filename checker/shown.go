package checker

import (
	"sort"

	"github.com/lockcheck/lockcheck/history"
)

// ShownHolds bounds the holds a result keeps of one key: twice what the
// timeline draws of a key (300), so that its window around the first
// finding is inside what was kept.
const ShownHolds = 600

// firstFindings gives each key's earliest finding that is not a lost
// lock, among the findings listed (a timeline centres its key there).
func (p *part) firstFindings() map[string]int64 {
	first := map[string]int64{}
	note := func(fs *findings) {
		for _, f := range fs.list {
			if f.Kind == KindLostLock {
				continue
			}
			if at, ok := first[f.Key]; !ok || f.Start < at {
				first[f.Key] = f.Start
			}
		}
	}
	for i := range p.found {
		note(&p.found[i])
	}
	return first
}

// shownHolds keeps up to ShownHolds of one key's holds, in start order:
// those around the first hold that ends at or after at, when the key has
// a finding (found), else the first ones.
func shownHolds(holds []Hold, at int64, found bool) []Hold {
	sortHolds(holds)
	if len(holds) <= ShownHolds {
		return holds
	}
	first := 0
	if found {
		first = len(holds)
		for i := range holds {
			if holds[i].End >= at {
				first = i
				break
			}
		}
	}
	lo := shownFrom(first, len(holds))
	return append([]Hold(nil), holds[lo:lo+ShownHolds]...)
}

// shownFrom is where the ShownHolds shown of n holds start, around
// the first.
func shownFrom(first, n int) int {
	return max(0, min(first-ShownHolds/2, n-ShownHolds))
}

// sortHolds orders holds by start, keeping the order they were found in
// on ties.
func sortHolds(holds []Hold) {
	sort.SliceStable(holds, func(i, j int) bool { return holds[i].Start < holds[j].Start })
}

// shownWrites are key k's resource writes called within the span of the
// holds (all of them when there are none, up to limit; limit < 0: no
// limit).
func shownWrites(h *history.History, k *keyOps, holds []Hold, limit int) []history.Op {
	from, to := holdSpan(holds)
	var out []history.Op
	for _, i := range k.ops {
		op := &h.Ops[i]
		if op.Kind != history.Write || op.Call < from || op.Call > to {
			continue
		}
		if len(holds) == 0 && limit >= 0 && len(out) >= limit {
			break
		}
		out = append(out, *op)
	}
	return out
}

// holdSpan is the span of the holds: everything when there are none.
func holdSpan(holds []Hold) (from, to int64) {
	from, to = 0, never
	if len(holds) > 0 {
		from, to = holds[0].Start, holds[0].End
		for _, hd := range holds {
			from, to = min(from, hd.Start), max(to, hd.End)
		}
	}
	return from, to
}
