package main

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestImportForceReplacesARun: import refuses a folder that holds a run,
// and with --force removes the files the new history makes stale, keeping
// the user's own.
func TestImportForceReplacesARun(t *testing.T) {
	dir := t.TempDir()
	edn, out := filepath.Join(dir, "history.edn"), filepath.Join(dir, "run")
	if err := os.WriteFile(edn, []byte(mutexEDN), 0o644); err != nil {
		t.Fatal(err)
	}
	stale := []string{"history.json", "result.json", "report.html", "linearizability.html", "junit.xml", "verdict.txt", "scenario.json", "run.log"}
	if err := os.MkdirAll(out, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range append(slices.Clone(stale), "notes.txt") {
		if err := os.WriteFile(filepath.Join(out, name), []byte("old\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var stdout, stderr bytes.Buffer
	if code := run([]string{"import", "jepsen", "--ttl", "24h", edn, out}, &stdout, &stderr); code != usageExit {
		t.Fatalf("import into a run's folder: exit %d, want %d; stderr %q", code, usageExit, stderr.String())
	}
	if code := run([]string{"import", "jepsen", "--ttl", "24h", "--force", edn, out}, &stdout, &stderr); code != 0 {
		t.Fatalf("import --force: exit %d: %s", code, stderr.String())
	}
	for _, name := range stale[1:] {
		if _, err := os.Stat(filepath.Join(out, name)); err == nil {
			t.Errorf("import --force left the stale %s", name)
		}
	}
	if b, err := os.ReadFile(filepath.Join(out, "history.json")); err != nil || bytes.Equal(b, []byte("old\n")) {
		t.Errorf("import --force did not write history.json (%v)", err)
	}
	if _, err := os.Stat(filepath.Join(out, "notes.txt")); err != nil {
		t.Errorf("import --force removed a file no run writes: %v", err)
	}
}

// TestCheckTakesAHistoryFile: lockcheck check FILE checks a history.json
// given by its path and writes the reports beside it.
func TestCheckTakesAHistoryFile(t *testing.T) {
	dir := t.TempDir()
	edn, out := filepath.Join(dir, "history.edn"), filepath.Join(dir, "imported")
	if err := os.WriteFile(edn, []byte(mutexEDN), 0o644); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	if code := run([]string{"import", "jepsen", "--ttl", "24h", edn, out}, &stdout, &stderr); code != 0 {
		t.Fatalf("import: exit %d: %s", code, stderr.String())
	}
	stderr.Reset()
	if code := run([]string{"check", filepath.Join(out, "history.json")}, &stdout, &stderr); code == usageExit {
		t.Fatalf("check FILE: exit %d: %s", code, stderr.String())
	}
	if _, err := os.Stat(filepath.Join(out, "result.json")); err != nil {
		t.Errorf("check FILE wrote no result.json beside the file: %v", err)
	}
}
