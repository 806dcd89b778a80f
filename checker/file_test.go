package checker

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"slices"
	"testing"

	"github.com/lockcheck/lockcheck/history"
)

// TestRunFileAgreesWithRun: a history checked a group of keys at a time
// from its file gives what checking it whole in memory gives: verdict,
// every check's status and count, the same findings naming the same
// operations, the same holds and writes. The history is many short random
// histories side by side (legal and corrupted ones, with and without
// faults), each on keys of its own.
func TestRunFileAgreesWithRun(t *testing.T) {
	defer func(n int) { groupOps = n }(groupOps)
	groupOps = 30
	dir := t.TempDir()
	violated := 0
	for seed := range uint64(30) {
		rng := rand.New(rand.NewPCG(seed, 7))
		h := &history.History{Meta: history.Meta{Seed: int64(seed)}}
		for part := range 12 {
			p := randomHistory(rng, seed%2 == 0)
			for _, op := range p.Ops {
				op.Key = fmt.Sprintf("%s/%d", op.Key, part)
				h.Ops = append(h.Ops, op)
			}
			h.Faults = append(h.Faults, p.Faults...)
		}
		path := filepath.Join(dir, fmt.Sprintf("h%d.json", seed))
		if err := h.Save(path); err != nil {
			t.Fatal(err)
		}
		if len(h.Ops) < 3*groupOps {
			t.Fatalf("seed %d: %d operations make fewer than three groups", seed, len(h.Ops))
		}
		opts := Options{MaxFindings: 1 << 20}
		want, err := Run(context.Background(), h, opts)
		if err != nil {
			t.Fatal(err)
		}
		got, head, err := RunFile(context.Background(), path, func(o *Options) { *o = opts })
		if err != nil {
			t.Fatal(err)
		}
		if head.Ops != nil || head.Meta.Seed != int64(seed) {
			t.Fatalf("seed %d: RunFile gave %d operations, seed %d: want the head only", seed, len(head.Ops), head.Meta.Seed)
		}
		if want.Verdict == Violated {
			violated++
		}
		if got.Verdict != want.Verdict || got.Ops != want.Ops || got.Keys != want.Keys || got.Segments != want.Segments {
			t.Fatalf("seed %d: from the file %s (%d ops, %d keys, %d segments), whole %s (%d, %d, %d)", seed,
				got.Summary, got.Ops, got.Keys, got.Segments, want.Summary, want.Ops, want.Keys, want.Segments)
		}
		for _, w := range want.Checks {
			g, _ := got.Check(w.Name)
			if g.Status != w.Status || g.Count != w.Count || !reflect.DeepEqual(findingSet(g.Findings), findingSet(w.Findings)) {
				t.Fatalf("seed %d, %s: from the file %s %d %v\nwhole %s %d %v", seed, w.Name, g.Status, g.Count, findingSet(g.Findings), w.Status, w.Count, findingSet(w.Findings))
			}
		}
		if !reflect.DeepEqual(holdSet(got.Holds), holdSet(want.Holds)) || len(got.Writes) != len(want.Writes) {
			t.Fatalf("seed %d: holds or writes differ:\n%v\n%v", seed, holdSet(got.Holds), holdSet(want.Holds))
		}
	}
	if violated < 10 {
		t.Fatalf("%d of 30 histories violated: too few to compare findings", violated)
	}
}

func findingSet(fs []Finding) []string {
	var out []string
	for _, f := range fs {
		s := fmt.Sprintf("%s %s %d-%d %q", f.Kind, f.Key, f.Start, f.End, f.Summary)
		for _, op := range f.Ops {
			s += fmt.Sprintf(" #%d=%s/%s@%d", op.Index, op.Key, op.Kind, op.Call)
		}
		for _, hd := range f.Holds {
			s += fmt.Sprintf(" hold#%d/%d", hd.Acquire, hd.Extend)
		}
		out = append(out, s)
	}
	slices.Sort(out)
	return out
}

func holdSet(hs []Hold) []string {
	var out []string
	for _, hd := range hs {
		out = append(out, fmt.Sprintf("%+v", hd))
	}
	slices.Sort(out)
	return out
}
