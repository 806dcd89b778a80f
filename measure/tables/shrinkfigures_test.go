package tables

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lockcheck/lockcheck/measure"
	"github.com/lockcheck/lockcheck/reports"
	"github.com/lockcheck/lockcheck/shrink"
)

// fakeShrink stands for shrink.Run without Docker: a run's figures are
// made up from its name, and each call is recorded with the reproducer's
// folder it was given.
type fakeShrink struct {
	mu    sync.Mutex
	calls map[string]string
}

func (fs *fakeShrink) run(_ context.Context, from string, o shrink.Options) (*reports.Shrunk, error) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	if fs.calls == nil {
		fs.calls = map[string]string{}
	}
	fs.calls[from] = o.Out
	n := len(filepath.Base(from))
	return &reports.Shrunk{From: from, Kind: "double_holder", Before: reports.Size{Clients: 6, Ops: 100 * n}, After: reports.Size{Clients: 2, Ops: n},
		Reproduced: 10 - n%2, Runs: 10, Confirmed: true, Command: "lockcheck replay " + o.Out, Budget: o.Budget.String(), Ended: "budget",
		Started: time.Unix(int64(n), 0).UTC()}, nil
}

// TestShardedShrinkFiguresMerged: the shrink figures measured whole and
// in three shards (each given the runs in another order) by the runner,
// with a fake shrink, and the shards merged with lockcheck merge's
// function, give the whole measurement's rows and table.
func TestShardedShrinkFiguresMerged(t *testing.T) {
	root := t.TempDir()
	var runs []string
	for _, name := range []string{"matrix/valkey-9.1-sentinel-native-kill-primary", "mutant-del", "matrix/valkey-9.1-cluster-native-clock-jump", "mutant-reacquire", "mutant-shared-token"} {
		run := filepath.Join(root, name)
		if err := os.MkdirAll(run, 0o755); err != nil {
			t.Fatal(err)
		}
		runs = append(runs, run+"/")
	}
	o := shrink.Options{Budget: 10 * time.Minute, Tries: 3, Confirm: 10}
	measureInto := func(shard measure.Shard, runs []string) (string, *reports.ShrinkFigures, *fakeShrink) {
		t.Helper()
		dir := t.TempDir()
		fake := &fakeShrink{}
		f := ShrinkFigures{Runs: runs, Options: o, Parallel: 2, Shard: shard, Out: dir}
		sf, err := f.measure(context.Background(), fake.run)
		if err != nil || !sf.Complete {
			t.Fatalf("shard %s: complete %v, %v", shard, sf != nil && sf.Complete, err)
		}
		return dir, sf, fake
	}
	_, whole, fake := measureInto(measure.Shard{}, runs)
	if len(whole.Rows) != len(runs) || len(fake.calls) != len(runs) {
		t.Fatalf("whole: %d rows, %d shrinks; want %d", len(whole.Rows), len(fake.calls), len(runs))
	}
	if !slices.IsSortedFunc(whole.Rows, func(a, b reports.Shrunk) int { return strings.Compare(a.From, b.From) }) {
		t.Errorf("the rows are not in the runs' sorted order: %v", whole.Rows)
	}
	for from, out := range fake.calls {
		if out != from+"-shrunk" {
			t.Errorf("%s shrunk into %s, want beside it, %s-shrunk", from, out, from)
		}
	}
	var dirs []string
	for i := 1; i <= 3; i++ {
		order := slices.Clone(runs)
		slices.Reverse(order[:i+1])
		dir, sf, _ := measureInto(measure.Shard{I: i, N: 3}, order)
		if sf.Shards != 3 || len(sf.Rows) >= len(runs) {
			t.Fatalf("shard %d/3: part %+v, %d rows", i, sf.Part, len(sf.Rows))
		}
		dirs = append(dirs, dir)
	}
	out := filepath.Join(t.TempDir(), "merged")
	var md strings.Builder
	if err := Merge(dirs, out, &md); err != nil {
		t.Fatal(err)
	}
	var merged reports.ShrinkFigures
	if err := reports.ReadJSON(filepath.Join(out, reports.ShrinkFiguresFile), &merged); err != nil {
		t.Fatal(err)
	}
	if !merged.Complete || merged.Shards != 0 || !reflect.DeepEqual(merged.Rows, whole.Rows) || reports.ShrinkMarkdown(merged.Rows) != reports.ShrinkMarkdown(whole.Rows) {
		t.Fatalf("merged (complete %v, shards %d):\n%s\nwhole:\n%s", merged.Complete, merged.Shards, reports.ShrinkMarkdown(merged.Rows), reports.ShrinkMarkdown(whole.Rows))
	}
	if !strings.Contains(md.String(), "3 shards") || MeasurementFile(out) != reports.ShrinkFiguresFile {
		t.Errorf("the merged table does not say it was measured in shards, or is not known for what it is:\n%s", md.String())
	}
	if err := Merge(dirs[:2], filepath.Join(t.TempDir(), "two"), &md); err == nil {
		t.Error("two of three shards merged without complaint")
	}
	if _, err := ShrinkPlan([]string{runs[0], strings.TrimSuffix(runs[0], "/")}); err == nil {
		t.Error("a run given twice made a plan")
	}
}
