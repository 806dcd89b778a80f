package measure

import (
	"fmt"
	"slices"
)

// Part is what a shard's table file says of the plan it holds a part of;
// the zero Part is a whole plan's (and is left out of the file).
type Part struct {
	Shard  int `json:"shard,omitempty"`
	Shards int `json:"shards,omitempty"`
	// Plan is every item's key, the whole plan's, in order: the merge
	// puts the shards' results back in it.
	Plan []string `json:"plan,omitempty"`
}

// partOf is the Part a shard of p writes.
func partOf[T any](s Shard, p Plan[T]) Part {
	if s.Whole() {
		return Part{}
	}
	return Part{Shard: s.I, Shards: s.N, Plan: p.Keys()}
}

// Merge joins the results of a plan's shards, one slice per part (read
// from each part's file, key giving an item's key), into the whole plan's
// results in plan order. Every part must be a shard of the same plan,
// each shard given once, each item measured by the shard it belongs to
// and by no other. An item no part measured is an error unless its shard
// is not complete (an interrupted shard): then the merged results lack
// it, and complete is false.
func Merge[R any](parts []Part, partComplete []bool, results [][]R, key func(R) string) (merged []R, complete bool, err error) {
	if len(parts) == 0 {
		return nil, false, fmt.Errorf("nothing to merge")
	}
	first := parts[0]
	at := map[string]int{}
	for i, k := range first.Plan {
		at[k] = i
	}
	got := make([]*R, len(first.Plan))
	seen := map[int]bool{}
	complete = true
	for p, part := range parts {
		if part.Shards < 2 {
			return nil, false, fmt.Errorf("part %d is a whole measurement, not a shard (--shard I/N made none)", p+1)
		}
		if part.Shards != len(parts) {
			return nil, false, fmt.Errorf("part %d is shard %d of %d, but %d parts were given: give every shard once", p+1, part.Shard, part.Shards, len(parts))
		}
		if seen[part.Shard] {
			return nil, false, fmt.Errorf("part %d is shard %d of %d again: give every shard once", p+1, part.Shard, part.Shards)
		}
		seen[part.Shard] = true
		if !slices.Equal(part.Plan, first.Plan) {
			return nil, false, fmt.Errorf("part %d is not a shard of the same plan as part 1 (its runs, builds and rows must match)", p+1)
		}
		complete = complete && partComplete[p]
		shard := Shard{I: part.Shard, N: part.Shards}
		for _, r := range results[p] {
			i, ok := at[key(r)]
			switch {
			case !ok:
				return nil, false, fmt.Errorf("part %d measured %s, which is not in the plan", p+1, key(r))
			case !shard.Mine(i):
				return nil, false, fmt.Errorf("part %d (shard %s) measured %s, another shard's", p+1, shard, key(r))
			case got[i] != nil:
				return nil, false, fmt.Errorf("part %d measured %s twice", p+1, key(r))
			}
			got[i] = &r
		}
	}
	for i, r := range got {
		if r != nil {
			merged = append(merged, *r)
			continue
		}
		owner := i%len(parts) + 1
		if partComplete[slices.IndexFunc(parts, func(p Part) bool { return p.Shard == owner })] {
			return nil, false, fmt.Errorf("no part measured %s: shard %d/%d says it is complete", first.Plan[i], owner, len(parts))
		}
	}
	return merged, complete, nil
}
