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
	note(&p.lin.found)
	return first
}

// shownHolds keeps up to ShownHolds of one key's holds: those around the
// first hold that ends at or after at, when the key has a finding (found),
// else the first ones.
func shownHolds(holds []Hold, at int64, found bool) []Hold {
	if len(holds) <= ShownHolds {
		return holds
	}
	sort.Slice(holds, func(i, j int) bool { return holds[i].Start < holds[j].Start })
	first := 0
	if found {
		first = sort.Search(len(holds), func(i int) bool { return holds[i].End >= at })
	}
	lo := max(0, min(first-ShownHolds/2, len(holds)-ShownHolds))
	return append([]Hold(nil), holds[lo:lo+ShownHolds]...)
}

// shownWrites are key k's resource writes called within the span of its
// shown holds (all of them when it has no holds, up to ShownHolds).
func shownWrites(h *history.History, k *keyOps, holds []Hold) []history.Op {
	from, to := int64(0), int64(never)
	if len(holds) > 0 {
		from, to = holds[0].Start, holds[0].End
		for _, hd := range holds {
			from, to = min(from, hd.Start), max(to, hd.End)
		}
	}
	var out []history.Op
	for _, i := range k.ops {
		op := &h.Ops[i]
		if op.Kind != history.Write || op.Call < from || op.Call > to {
			continue
		}
		if len(holds) == 0 && len(out) >= ShownHolds {
			break
		}
		out = append(out, *op)
	}
	return out
}
