package checker

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lockcheck/lockcheck/history"
)

// TestSavedHistories replays testdata/histories: each NAME.VERDICT.json
// must get VERDICT, with NAME.options.json as options when present, else
// the options a recorded run is checked with (OptionsFor).
func TestSavedHistories(t *testing.T) {
	files, err := filepath.Glob("testdata/histories/*.json")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, path := range files {
		base := strings.TrimSuffix(filepath.Base(path), ".json")
		name, verdict, found := strings.Cut(base, ".")
		if !found || verdict == "options" {
			continue
		}
		n++
		t.Run(name, func(t *testing.T) {
			h, err := history.Load(path)
			if err != nil {
				t.Fatal(err)
			}
			opts := OptionsFor(h)
			if b, err := os.ReadFile(filepath.Join(filepath.Dir(path), name+".options.json")); err == nil {
				if err := json.Unmarshal(b, &opts); err != nil {
					t.Fatalf("options: %v", err)
				}
			}
			res, err := Run(context.Background(), h, opts)
			if err != nil {
				t.Fatal(err)
			}
			if string(res.Verdict) != verdict {
				t.Errorf("verdict %s, want %s: %s", res.Verdict, verdict, res.Summary)
			}
		})
	}
	if n == 0 {
		t.Fatal("no saved histories found")
	}
}
