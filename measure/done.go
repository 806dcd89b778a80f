package measure

import "fmt"

// Done is what an earlier measurement of a plan measured before it
// stopped (Ctrl-C, a session's end, a run that would not end): its
// results by item key, read back from the table's own file. Resume takes
// them as measured. A nil Done is nothing measured yet.
type Done[R any] struct {
	byKey map[string]R
}

// NewDone indexes results by key; a key measured twice is an error (a
// file written by hand, or two measurements' results mixed).
func NewDone[R any](results []R, key func(R) string) (*Done[R], error) {
	d := &Done[R]{byKey: map[string]R{}}
	for _, r := range results {
		k := key(r)
		if _, ok := d.byKey[k]; ok {
			return nil, fmt.Errorf("%s is measured twice", k)
		}
		d.byKey[k] = r
	}
	return d, nil
}

// Len is how many items were measured.
func (d *Done[R]) Len() int {
	if d == nil {
		return 0
	}
	return len(d.byKey)
}

// CheckDone says whether d can be resumed as shard s of plan p: every
// item it measured must be one of the shard's. Call it before anything
// is started, so that a wrong folder is refused at once.
func CheckDone[T, R any](p Plan[T], s Shard, d *Done[R]) error {
	_, _, err := left(d, p, s, p.lanes(s))
	return err
}

// left is the shard's lanes with the items d did not measure (lanes left empty
// dropped), and d's results as the runner records them.
func left[T, R any](d *Done[R], p Plan[T], s Shard, lanes []lane) ([]lane, []Result[any], error) {
	if d.Len() == 0 {
		return lanes, nil, nil
	}
	var out []lane
	var carried []Result[any]
	for _, l := range lanes {
		rest := lane{key: l.key}
		for _, i := range l.items {
			k := p.Key(p.Items[i])
			if v, ok := d.byKey[k]; ok {
				carried = append(carried, Result[any]{Index: i, Key: k, Value: v})
				continue
			}
			rest.items = append(rest.items, i)
		}
		if len(rest.items) > 0 {
			out = append(out, rest)
		}
	}
	if len(carried) != len(d.byKey) {
		at := map[string]bool{}
		for _, c := range carried {
			at[c.Key] = true
		}
		for k := range d.byKey {
			if !at[k] {
				return nil, nil, fmt.Errorf("the earlier measurement holds %s, which is not an item of %s of this plan: resume it with the same flags it was started with", k, s)
			}
		}
	}
	return out, carried, nil
}
