package measure

// Plan is a measurement's list of items, in the order its table shows
// them.
type Plan[T any] struct {
	Items []T
	// Key names an item, uniquely in the plan: Merge matches the shards'
	// results to the plan by it.
	Key func(T) string
	// Lane, when set, names the lane an item runs in: a lane's items run
	// one after the other on one worker, in plan order, so that they can
	// share what the lane starts (a topology). When nil every item is a
	// lane of its own.
	Lane func(T) string
	// Steps is how many progress lines an item prints (1 when nil): the
	// progress line's total is their sum over the shard's items.
	Steps func(T) int
}

// Keys are every item's key, in plan order.
func (p Plan[T]) Keys() []string {
	out := make([]string, len(p.Items))
	for i, it := range p.Items {
		out[i] = p.Key(it)
	}
	return out
}

// lane is the items of one lane in a shard, as plan indexes.
type lane struct {
	key   string
	items []int
}

// lanes groups the shard's items into lanes, in order of first
// appearance.
func (p Plan[T]) lanes(s Shard) []lane {
	var out []lane
	at := map[string]int{}
	for i, it := range p.Items {
		if !s.Mine(i) {
			continue
		}
		key := p.Key(it)
		if p.Lane != nil {
			key = p.Lane(it)
		}
		j, ok := at[key]
		if !ok || p.Lane == nil {
			j = len(out)
			at[key] = j
			out = append(out, lane{key: key})
		}
		out[j].items = append(out[j].items, i)
	}
	return out
}

// steps is the progress line's total for the shard.
func (p Plan[T]) steps(s Shard) int {
	n := 0
	for i, it := range p.Items {
		if s.Mine(i) {
			n += p.stepsOf(it)
		}
	}
	return n
}

// stepsOf is how many progress lines one item prints.
func (p Plan[T]) stepsOf(it T) int {
	if p.Steps == nil {
		return 1
	}
	return p.Steps(it)
}

// Lanes is how many lanes the runner r keeps going at once over plan p:
// its Workers (1 when 0; every lane at once when 0 and p has lanes of its
// own), never more than the shard has lanes, at least 1. A table that
// starts a topology per worker starts this many.
func Lanes[T any](r Runner, p Plan[T]) int {
	return lanesAtOnce(r.Workers, p.Lane != nil, len(p.lanes(r.Shard)))
}

// lanesAtOnce is Lanes for n lanes to run, workers asked for.
func lanesAtOnce(workers int, ownLanes bool, n int) int {
	w := workers
	if w <= 0 {
		w = 1
		if ownLanes {
			w = n
		}
	}
	return max(min(w, n), 1)
}
