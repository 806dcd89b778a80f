package checker

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/lockcheck/lockcheck/history/historyjson"
)

// TestSavedHistories replays testdata/histories: each NAME.VERDICT.json
// must get VERDICT, with NAME.options.json as options when present, else
// the options a recorded run is checked with (OptionsFor), and, when
// NAME.findings.json lists them, exactly those kinds of failing findings.
func TestSavedHistories(t *testing.T) {
	files, err := filepath.Glob("testdata/histories/*.json")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, path := range files {
		base := strings.TrimSuffix(filepath.Base(path), ".json")
		name, verdict, found := strings.Cut(base, ".")
		if !found || verdict == "options" || verdict == "findings" {
			continue
		}
		n++
		t.Run(name, func(t *testing.T) {
			h, err := historyjson.Load(path)
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
			if b, err := os.ReadFile(filepath.Join(filepath.Dir(path), name+".findings.json")); err == nil {
				var want []FindingKind
				if err := json.Unmarshal(b, &want); err != nil {
					t.Fatalf("findings: %v", err)
				}
				var got []FindingKind
				for _, c := range res.Checks {
					for _, f := range c.Findings {
						if c.Status == Fail && !f.Allowed && !slices.Contains(got, f.Kind) {
							got = append(got, f.Kind)
						}
					}
				}
				slices.Sort(got)
				slices.Sort(want)
				if !slices.Equal(got, want) {
					t.Errorf("failing findings %v, want %v", got, want)
				}
			}
		})
	}
	if n == 0 {
		t.Fatal("no saved histories found")
	}
}
