package main

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/lockcheck/lockcheck/scenarios/fault"
)

// repoRoot is the repository's root, seen from this package's folder,
// where go test runs.
const repoRoot = "../.."

// TestReferenceUpToDate regenerates docs/reference into a temporary folder
// and fails when a committed page differs: the reference is written from
// the code (flag sets, faults, clients), and a change there must carry
// the pages with it.
func TestReferenceUpToDate(t *testing.T) {
	dir := t.TempDir()
	if err := writeReference(dir); err != nil {
		t.Fatal(err)
	}
	for _, p := range referencePages() {
		want, err := os.ReadFile(filepath.Join(dir, p.name))
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(repoRoot, defaultReferenceDir, p.name)
		got, err := os.ReadFile(path)
		if err != nil {
			t.Errorf("%s: %v: run go run ./cmd/lockcheck docs from the repository's root", path, err)
			continue
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s differs from what the code generates (first at line %d): run go run ./cmd/lockcheck docs from the repository's root", path, firstDiffLine(got, want))
		}
	}
}

// firstDiffLine is the 1-based number of the first line where a and b
// differ.
func firstDiffLine(a, b []byte) int {
	al, bl := strings.Split(string(a), "\n"), strings.Split(string(b), "\n")
	for i := range min(len(al), len(bl)) {
		if al[i] != bl[i] {
			return i + 1
		}
	}
	return min(len(al), len(bl)) + 1
}

// faultRow is a row of docs/faults.md's table: the fault in backquotes,
// then its topologies.
var faultRow = regexp.MustCompile("^\\| `([a-z-]+)` \\| ([^|]+) \\|")

// TestFaultsPageMatchesCode holds docs/faults.md's hand-written table (with
// each fault's undo and schedule, which the generated page leaves out) to
// the code: one row per fault, each with the topologies it fits.
func TestFaultsPageMatchesCode(t *testing.T) {
	text, err := os.ReadFile(filepath.Join(repoRoot, "docs", "faults.md"))
	if err != nil {
		t.Fatal(err)
	}
	rows := map[string]string{}
	for _, line := range strings.Split(string(text), "\n") {
		if m := faultRow.FindStringSubmatch(line); m != nil {
			rows[m[1]] = strings.TrimSpace(m[2])
		}
	}
	for _, f := range fault.Faults() {
		want := strings.Join(faultKinds(f), ", ")
		got, ok := rows[f.Name()]
		if !ok {
			t.Errorf("docs/faults.md has no row for %s (topologies %s)", f.Name(), want)
			continue
		}
		if got != want {
			t.Errorf("docs/faults.md gives %s the topologies %q; it fits %q", f.Name(), got, want)
		}
		delete(rows, f.Name())
	}
	for name := range rows {
		if !slices.Contains(fault.Names(), name) {
			t.Errorf("docs/faults.md has a row for %s, which is no fault", name)
		}
	}
}
