package measure

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
)

// TestResumeRunsOnlyWhatIsLeft: a shard interrupted after some items,
// resumed with what it measured, runs only the rest, counts its progress
// on from the earlier figure, and ends complete with the same rows as an
// uninterrupted shard.
func TestResumeRunsOnlyWhatIsLeft(t *testing.T) {
	s := Shard{I: 1, N: 2}
	ctx, cancel := context.WithCancel(context.Background())
	square := func(_ context.Context, l *Lane, i int) (row, error) {
		l.Progress("first half")
		l.Progress("second half")
		return row{Key: fmt.Sprintf("item-%d", i), Figure: i * i}, nil
	}
	first, err := Run(ctx, Runner{Workers: 1, Shard: s}, fakePlan(), func(ctx context.Context, l *Lane, i int) (row, error) {
		if i == 6 {
			cancel()
			return row{}, ctx.Err()
		}
		return square(ctx, l, i)
	}, func(*Snapshot[row]) error { return nil })
	if err != nil || first.Complete || len(first.Results) == 0 {
		t.Fatalf("interrupted shard: err %v, complete %v, %d results", err, first.Complete, len(first.Results))
	}
	var earlier []row
	for _, r := range first.Results {
		earlier = append(earlier, r.Value)
	}
	done, err := NewDone(earlier, func(r row) string { return r.Key })
	if err != nil {
		t.Fatal(err)
	}
	if err := CheckDone(fakePlan(), s, done); err != nil {
		t.Fatal(err)
	}
	var ran []int
	var log strings.Builder
	snap, err := Resume(context.Background(), Runner{Workers: 1, Shard: s, Log: &log}, fakePlan(), done, func(ctx context.Context, l *Lane, i int) (row, error) {
		ran = append(ran, i)
		return square(ctx, l, i)
	}, func(*Snapshot[row]) error { return nil })
	if err != nil || !snap.Complete {
		t.Fatalf("resumed: err %v, complete %v", err, snap.Complete)
	}
	for _, i := range ran {
		if slices.ContainsFunc(earlier, func(r row) bool { return r.Key == fmt.Sprintf("item-%d", i) }) {
			t.Errorf("resumed shard ran item %d again", i)
		}
	}
	_, whole := measureFake(t, s, nil)
	var got []row
	for _, r := range snap.Results {
		got = append(got, r.Value)
	}
	if !slices.Equal(got, whole) {
		t.Fatalf("resumed rows %v, want %v", got, whole)
	}
	steps := 2 * len(earlier)
	if want := fmt.Sprintf("[%d/10] first half", steps+1); !strings.Contains(log.String(), want) || !strings.Contains(snap.Machine, "resumed") {
		t.Fatalf("progress %q, machine %q: want the count going on from %d and the machine saying resumed", log.String(), snap.Machine, steps)
	}
}

// TestResumeRefusesAnotherPlan: results of another shard, or of items
// the plan lacks, are refused before anything runs; a key measured twice
// is refused when read.
func TestResumeRefusesAnotherPlan(t *testing.T) {
	key := func(r row) string { return r.Key }
	other, err := NewDone([]row{{Key: "item-1"}}, key)
	if err != nil {
		t.Fatal(err)
	}
	if err := CheckDone(fakePlan(), Shard{I: 1, N: 2}, other); err == nil || !strings.Contains(err.Error(), "item-1") {
		t.Fatalf("item-1 (shard 2's) resumed as shard 1: %v", err)
	}
	unknown, _ := NewDone([]row{{Key: "item-99"}}, key)
	ran := false
	_, err = Resume(context.Background(), Runner{}, fakePlan(), unknown, func(context.Context, *Lane, int) (row, error) {
		ran = true
		return row{}, nil
	}, func(*Snapshot[row]) error { return nil })
	if err == nil || ran {
		t.Fatalf("item-99 resumed: err %v, ran %v", err, ran)
	}
	if _, err := NewDone([]row{{Key: "item-2"}, {Key: "item-2"}}, key); err == nil {
		t.Fatal("item-2 measured twice was taken")
	}
}
