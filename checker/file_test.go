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
	"github.com/lockcheck/lockcheck/history/historyjson"
	"github.com/lockcheck/lockcheck/history/synth"
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
		sameChecks(t, seed, got, want)
		sameNotice(t, seed, got, want)
		if !reflect.DeepEqual(holdSet(got.Holds), holdSet(want.Holds)) || len(got.Writes) != len(want.Writes) {
			t.Fatalf("seed %d: holds or writes differ:\n%v\n%v", seed, holdSet(got.Holds), holdSet(want.Holds))
		}
	}
	if violated < 10 {
		t.Fatalf("%d of 30 histories violated: too few to compare findings", violated)
	}
}

// sameChecks fails t unless got has want's verdict, counts, and every
// check's status, count and findings.
func sameChecks(t *testing.T, seed uint64, got, want *Result) {
	t.Helper()
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

// TestRunFileChunksAKey: one key too long to hold at once is checked a
// chunk at a time, and the result is the whole check's. The key's history
// is many short histories one after the other, apart by more than a lease
// (the segmenter cuts there): random ones, generated fenced ones with
// resource writes, some turned into unfenced counter writes, some
// corrupted, with tokens, workers, fences and counter values that repeat
// across the parts, so that what a chunk carries to the next (the last
// acquires, the best fence and value, the fences handed out, the values
// read, the latest unknown operations) decides findings.
func TestRunFileChunksAKey(t *testing.T) {
	defer func(n int) { groupOps = n }(groupOps)
	groupOps = 40
	dir := t.TempDir()
	violated, cuts := 0, 0
	for seed := range uint64(30) {
		rng := rand.New(rand.NewPCG(seed, 11))
		h := &history.History{Meta: history.Meta{Seed: int64(seed)}}
		offset, counter := int64(0), int64(0)
		for part := range 14 {
			var p *history.History
			if part%3 == 0 {
				p = synth.Generate(int64(seed)*100+int64(part), 30+rng.IntN(40), 1, 3)
			} else {
				p = randomHistory(rng, seed%2 == 0)
			}
			unfenced := rng.IntN(2) == 0
			last := int64(0)
			for _, op := range p.Ops {
				op.Key = "lock"
				op.Call += offset
				op.Return += offset
				if op.Kind == history.Write && unfenced {
					op.HasFence, op.Fence = false, 0
					op.Read, op.Wrote = counter, counter+1
					counter++
				}
				h.Ops = append(h.Ops, op)
				last = max(last, op.Return, op.Call)
			}
			for _, f := range p.Faults {
				f.Start += offset
				f.End += offset
				h.Faults = append(h.Faults, f)
			}
			if rng.IntN(2) == 0 { // a write that returns after the next part began: open at the cut
				for j := len(h.Ops) - 1; j >= len(h.Ops)-len(p.Ops); j-- {
					if op := &h.Ops[j]; op.Kind == history.Write {
						op.Return = last + 3.5e9
						break
					}
				}
			}
			if rng.IntN(3) == 0 { // corrupt one of the part's operations against the earlier parts
				op := &h.Ops[len(h.Ops)-1-rng.IntN(len(p.Ops))]
				switch {
				case op.Kind == history.Write && op.HasFence:
					op.Fence = int64(rng.IntN(5))
				case op.Kind == history.Write:
					op.Read = int64(rng.IntN(int(counter) + 1))
				case op.Kind == history.Acquire && op.HasFence:
					op.Fence = int64(rng.IntN(5))
				}
			}
			offset = last + 3e9 // past every lease
		}
		h.Meta.DurationNs = h.End()
		path := filepath.Join(dir, fmt.Sprintf("k%d.json", seed))
		err := h.Save(path)
		if err != nil {
			t.Fatal(err)
		}
		// checked whole as the file holds it (Save orders the operations)
		if h, err = historyjson.Load(path); err != nil {
			t.Fatal(err)
		}
		opts := Options{MaxFindings: 1 << 20}
		want, err := Run(context.Background(), h, opts)
		if err != nil {
			t.Fatal(err)
		}
		before := chunksCut
		got, _, err := RunFile(context.Background(), path, func(o *Options) { *o = opts })
		if err != nil {
			t.Fatal(err)
		}
		cuts += chunksCut - before
		if want.Verdict == Violated {
			violated++
		}
		sameChecks(t, seed, got, want)
		sameNotice(t, seed, got, want)
		if !reflect.DeepEqual(holdSet(got.Holds), holdSet(want.Holds)) || !reflect.DeepEqual(got.HeldTotal, want.HeldTotal) || len(got.Writes) != len(want.Writes) {
			t.Fatalf("seed %d: holds or writes differ (%d/%d holds of %v/%v, %d/%d writes)\n%v\n%v", seed, len(got.Holds), len(want.Holds), got.HeldTotal, want.HeldTotal, len(got.Writes), len(want.Writes), holdSet(got.Holds), holdSet(want.Holds))
		}
	}
	if violated < 10 || cuts < 100 {
		t.Fatalf("%d of 30 histories violated, %d chunks cut: too few to compare", violated, cuts)
	}
	t.Logf("%d violated, %d chunks cut", violated, cuts)
}
