package measure

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"
)

// row is a fake table's row: an item's key and a figure derived from it.
type row struct {
	Key    string
	Figure int
}

// fakePlan is ten items in three lanes.
func fakePlan() Plan[int] {
	return Plan[int]{Items: []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9},
		Key:   func(i int) string { return fmt.Sprintf("item-%d", i) },
		Lane:  func(i int) string { return fmt.Sprint(i % 3) },
		Steps: func(int) int { return 2 }}
}

// measureFake runs the fake plan's shard; its row function needs no
// Docker: the figure is the item's square.
func measureFake(t *testing.T, s Shard, log io.Writer) (*Snapshot[row], []row) {
	t.Helper()
	saves := 0
	snap, err := Run(context.Background(), Runner{Workers: 2, Shard: s, Log: log, Unit: "runs"}, fakePlan(),
		func(_ context.Context, l *Lane, i int) (row, error) {
			l.Progress("first half")
			l.Progress("second half")
			return row{Key: fmt.Sprintf("item-%d", i), Figure: i * i}, nil
		},
		func(*Snapshot[row]) error { saves++; return nil })
	if err != nil {
		t.Fatal(err)
	}
	if !snap.Complete || saves != len(snap.Results)+1 {
		t.Fatalf("shard %s: complete %v, %d saves for %d results", s, snap.Complete, saves, len(snap.Results))
	}
	var rows []row
	for _, r := range snap.Results {
		rows = append(rows, r.Value)
	}
	return snap, rows
}

// TestShardedMeasurementMerged: a plan measured in three shards and
// merged gives the rows the whole plan gives, in its order.
func TestShardedMeasurementMerged(t *testing.T) {
	var log strings.Builder
	_, whole := measureFake(t, Shard{}, &log)
	if len(whole) != 10 || !strings.Contains(log.String(), "[20/20] ") {
		t.Fatalf("whole: %d rows, log %q", len(whole), log.String())
	}
	var parts []Part
	var results [][]row
	for i := 1; i <= 3; i++ {
		snap, rows := measureFake(t, Shard{I: i, N: 3}, io.Discard)
		parts, results = append(parts, snap.Part), append(results, rows)
	}
	key := func(r row) string { return r.Key }
	merged, complete, err := Merge(parts, []bool{true, true, true}, results, key)
	if err != nil {
		t.Fatal(err)
	}
	if !complete || !slices.Equal(merged, whole) {
		t.Fatalf("merged (complete %v) %v\nwhole %v", complete, merged, whole)
	}
	if _, _, err := Merge(parts[:2], []bool{true, true}, results[:2], key); err == nil {
		t.Error("two of three shards merged without complaint")
	}
	if _, _, err := Merge([]Part{parts[0], parts[0], parts[2]}, []bool{true, true, true}, [][]row{results[0], results[0], results[2]}, key); err == nil {
		t.Error("a shard given twice merged without complaint")
	}
	short := slices.Clone(results)
	short[1] = short[1][1:]
	if _, _, err := Merge(parts, []bool{true, true, true}, short, key); err == nil {
		t.Error("a complete shard that lacks an item merged without complaint")
	}
	if got, complete, err := Merge(parts, []bool{true, false, true}, short, key); err != nil || complete || len(got) != 9 {
		t.Errorf("an interrupted shard: %d rows, complete %v, %v; want 9, false, nil", len(got), complete, err)
	}
}

// TestLanesRunInOrder: a lane's items run one after the other, in plan
// order, on one worker, and what the lane kept is released once.
func TestLanesRunInOrder(t *testing.T) {
	var seen []string
	closed := 0
	_, err := Run(context.Background(), Runner{Workers: 1}, fakePlan(), func(_ context.Context, l *Lane, i int) (int, error) {
		if l.Value == nil {
			l.Value = l.Key
			l.OnClose(func() error { closed++; return nil })
		}
		seen = append(seen, fmt.Sprintf("%s:%d", l.Value, i))
		return i, nil
	}, func(*Snapshot[int]) error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"0:0", "0:3", "0:6", "0:9", "1:1", "1:4", "1:7", "2:2", "2:5", "2:8"}
	if !slices.Equal(seen, want) || closed != 3 {
		t.Fatalf("ran %v, closed %d; want %v, 3", seen, closed, want)
	}
}

// TestInterruptedItemIsNoFigure: an item cut short by the end of ctx is
// left out, and the measurement is not complete.
func TestInterruptedItemIsNoFigure(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	snap, err := Run(ctx, Runner{}, Plan[int]{Items: []int{1, 2, 3}, Key: func(i int) string { return fmt.Sprint(i) }},
		func(ctx context.Context, _ *Lane, i int) (int, error) {
			if i == 2 {
				cancel()
				return 0, ctx.Err()
			}
			return i, nil
		}, func(*Snapshot[int]) error { return nil })
	if err != nil || snap.Complete || len(snap.Results) != 1 {
		t.Fatalf("err %v, complete %v, %d results; want nil, false, 1", err, snap.Complete, len(snap.Results))
	}
}

func TestParseShard(t *testing.T) {
	for _, c := range []struct {
		in   string
		want Shard
		ok   bool
	}{{"", Shard{}, true}, {"2/3", Shard{2, 3}, true}, {"1/1", Shard{1, 1}, true},
		{"4/3", Shard{}, false}, {"0/3", Shard{}, false}, {"02/3", Shard{}, false}, {"2/", Shard{}, false}, {"x", Shard{}, false}} {
		got, err := ParseShard(c.in)
		if (err == nil) != c.ok || got != c.want {
			t.Errorf("ParseShard(%q) = %v, %v", c.in, got, err)
		}
	}
}
