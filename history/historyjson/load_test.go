package historyjson

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/lockcheck/lockcheck/history"
)

// TestSaveLoad: a history reads back as it was saved, with or without
// operations and faults, and an older or foreign file's unknown fields
// are skipped; a newer format is refused.
func TestSaveLoad(t *testing.T) {
	dir := t.TempDir()
	for i, h := range []*history.History{
		{Meta: history.Meta{Server: "valkey-9.1", Seed: 3}},
		{Format: history.Format, Meta: history.Meta{Client: "native"}, Scenario: json.RawMessage(`{"seed":3}`),
			Ops:    []history.Op{{Client: 1, Key: "lock:{k1}", Kind: history.Acquire, Token: "a", HasFence: true, Outcome: history.OK, Call: 1, Return: 2}, {Key: "lock:{k1}", Kind: history.Release, Outcome: history.Unknown, Error: "timeout", Call: 3, Return: 4}},
			Faults: []history.Fault{{Name: "kill-primary", Start: 1, End: 2}}},
	} {
		path := filepath.Join(dir, "h.json")
		if err := h.Save(path); err != nil {
			t.Fatal(err)
		}
		back, err := Load(path)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(h, back) {
			t.Fatalf("history %d changed:\nsaved  %+v\nloaded %+v", i, h, back)
		}
	}
	path := filepath.Join(dir, "other.json")
	os.WriteFile(path, []byte(`{"extra": {"a": [1, 2]}, "ops": [{"key": "k", "kind": "acquire", "outcome": "ok", "call": 1, "return": 2}], "meta": {"seed": 9}}`), 0o644)
	h, err := Load(path)
	if err != nil || len(h.Ops) != 1 || h.Meta.Seed != 9 {
		t.Fatalf("a file with an unknown field: %+v, %v", h, err)
	}
	os.WriteFile(path, []byte(`{"format": 99, "ops": []}`), 0o644)
	if _, err := Load(path); err == nil || !strings.Contains(err.Error(), "newer lockcheck") {
		t.Fatalf("a newer format: %v", err)
	}
}
