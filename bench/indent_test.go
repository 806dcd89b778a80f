package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/lockcheck/lockcheck/history/synth"
)

// TestIndentHistory: indentHistory writes what encoding/json's Indent
// makes of the whole saved file (the layout jq . prints), and the result
// reads back as the same history.
func TestIndentHistory(t *testing.T) {
	dir := t.TempDir()
	saved, indented := filepath.Join(dir, "saved.json"), filepath.Join(dir, "indented.json")
	h := synth.Generate(1, 500, 3, 9)
	h.Scenario = json.RawMessage(`{"seed":1,"keys":[3]}`)
	if err := h.Save(saved); err != nil {
		t.Fatal(err)
	}
	if err := indentHistory(saved, indented); err != nil {
		t.Fatal(err)
	}
	src, _ := os.ReadFile(saved)
	var want bytes.Buffer
	if err := json.Indent(&want, src, "", "  "); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(indented)
	if !bytes.Equal(got, want.Bytes()) {
		t.Fatalf("indentHistory wrote\n%.2000s\nwant\n%.2000s", got, want.Bytes())
	}
}
