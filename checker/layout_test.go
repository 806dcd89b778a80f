package checker

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/lockcheck/lockcheck/history"
)

// TestRunFileAnyLayout: a history checked from its file gives the same
// result whatever the file's JSON layout: Save's operation per line, one
// line for the whole document, indented with the operations before the
// faults, and the meta last. The history is long enough to be checked a
// group of keys at a time, so every layout takes the chunked path.
func TestRunFileAnyLayout(t *testing.T) {
	defer func(n int) { groupOps = n }(groupOps)
	groupOps = 30
	dir := t.TempDir()
	for seed := range uint64(8) {
		rng := rand.New(rand.NewPCG(seed, 13))
		h := &history.History{Format: history.Format, Meta: history.Meta{Seed: int64(seed)}}
		for part := range 10 {
			p := randomHistory(rng, seed%2 == 0)
			for _, op := range p.Ops {
				op.Key = fmt.Sprintf("%s/%d", op.Key, part)
				h.Ops = append(h.Ops, op)
			}
			h.Faults = append(h.Faults, p.Faults...)
		}
		saved := filepath.Join(dir, "saved.json")
		if err := h.Save(saved); err != nil {
			t.Fatal(err)
		}
		compact, _ := json.Marshal(h)
		indented, _ := json.MarshalIndent(h, "", "  ")
		metaLast, _ := json.MarshalIndent(struct {
			Ops    []history.Op    `json:"ops"`
			Faults []history.Fault `json:"faults"`
			Format int             `json:"format"`
			Meta   history.Meta    `json:"meta"`
		}{h.Ops, h.Faults, h.Format, h.Meta}, "", "\t")
		opts := Options{MaxFindings: 1 << 20}
		want, _, err := RunFile(context.Background(), saved, func(o *Options) { *o = opts })
		if err != nil {
			t.Fatal(err)
		}
		for name, doc := range map[string][]byte{"compact": compact, "indented": indented, "meta last": metaLast} {
			path := filepath.Join(dir, "other.json")
			if err := os.WriteFile(path, doc, 0o644); err != nil {
				t.Fatal(err)
			}
			got, head, err := RunFile(context.Background(), path, func(o *Options) { *o = opts })
			if err != nil {
				t.Fatalf("seed %d, %s: %v", seed, name, err)
			}
			if head.Ops != nil || head.Meta.Seed != int64(seed) || len(head.Faults) != len(h.Faults) {
				t.Fatalf("seed %d, %s: the head read %d operations, seed %d, %d faults", seed, name, len(head.Ops), head.Meta.Seed, len(head.Faults))
			}
			sameChecks(t, seed, got, want)
			if !reflect.DeepEqual(holdSet(got.Holds), holdSet(want.Holds)) || len(got.Writes) != len(want.Writes) {
				t.Fatalf("seed %d, %s: holds or writes differ from Save's layout", seed, name)
			}
		}
	}
}
