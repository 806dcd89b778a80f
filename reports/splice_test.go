package reports

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Splice replaces exactly the lines between the markers and keeps every
// other byte, the markers included; a page without the markers, or with
// them unpaired, is an error, never a silent no-op.
func TestSplice(t *testing.T) {
	begin, end := BeginMarker("make claims"), EndMarker("make claims")
	head := "# page\r\n\nprose that quotes " + begin + " inline\n\n"
	tail := "\nmore prose\n  trailing blanks  \n"
	doc := head + begin + "\nold table\n| a |\n" + end + tail
	got, err := Splice([]byte(doc), "make claims", "new line\n| b |")
	if err != nil {
		t.Fatal(err)
	}
	if want := head + begin + "\nnew line\n| b |\n" + end + tail; string(got) != want {
		t.Fatalf("spliced\n%q\nwant\n%q", got, want)
	}
	// splicing again what is there changes nothing; an empty block
	// leaves the markers adjacent
	if again, _ := Splice(got, "make claims", "new line\n| b |\n"); string(again) != string(got) {
		t.Errorf("a second splice changed the page:\n%q", again)
	}
	if empty, _ := Splice([]byte(doc), "make claims", ""); string(empty) != head+begin+"\n"+end+tail {
		t.Errorf("empty block:\n%q", empty)
	}
	// a marker with trailing blanks or a CR still counts as its line
	crlf := strings.ReplaceAll(doc, begin+"\n", begin+" \r\n")
	if got, err := Splice([]byte(crlf), "make claims", "x\n"); err != nil || !strings.Contains(string(got), begin+" \r\nx\n"+end) {
		t.Errorf("CRLF marker: %q, %v", got, err)
	}
	// another block's markers are not this one's
	if _, err := Splice([]byte(doc), "make mitigations", "x"); !errors.Is(err, ErrNoMarker) {
		t.Errorf("other block: %v, want ErrNoMarker", err)
	}
	for name, bad := range map[string]string{
		"no end":         head + begin + "\nold\n" + tail,
		"no begin":       head + "old\n" + end + tail,
		"end first":      head + end + "\nold\n" + begin + tail,
		"begin twice":    head + begin + "\n" + begin + "\nold\n" + end + tail,
		"end twice":      head + begin + "\nold\n" + end + "\n" + end + tail,
		"inline markers": head + "text " + begin + "\nold\n" + end + " text\n",
	} {
		_, err := Splice([]byte(bad), "make claims", "x")
		if err == nil {
			t.Errorf("%s: no error", name)
			continue
		}
		if strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: error is more than one line: %q", name, err)
		}
		if name == "inline markers" != errors.Is(err, ErrNoMarker) {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// A page takes those of a measurement's blocks it has a place for (the
// README the tables, docs/redlock.md the tables and the rows); a page
// with none is an error that names the marker, and leaves the file as
// it was.
func TestSpliceFile(t *testing.T) {
	dir := t.TempDir()
	c := &Claims{Table: TableClaims, Server: "valkey-9.1", Version: "9.1.2", Runs: 2, Complete: true,
		Rows:    []ClaimRow{{Claim: "no-fault", Client: "redlock", Expect: "safe", Runs: 2, Safe: 2, GateMet: 2, Says: "safe", Command: "lockcheck run --topology=redlock"}},
		Mutants: []ClaimRow{{Claim: "mutant-redlock-any-node", Client: "mutant-redlock-any-node", Runs: 2, DoubleHolder: 2, Says: "a mistake", Command: "lockcheck run --client=mutant-redlock-any-node"}}}
	blocks := ClaimsBlocks(c)
	if blocks[0].Name != "make claims" || blocks[1].Name != "make claims, rows" {
		t.Fatalf("block names %q, %q", blocks[0].Name, blocks[1].Name)
	}
	var page strings.Builder
	ClaimsPage(&page, c)
	if page.String() != blocks[0].Text+"\n"+blocks[1].Text {
		t.Errorf("claims.md is not the blocks the docs show:\n%s", page.String())
	}
	for _, want := range []string{"| no-fault | redlock | safe | 2 | 0 | - | 0 | 0 | 2 | 2 | yes |", "| mutant-redlock-any-node | 2 | 2 | 2 | 0 | 0 |"} {
		if !strings.Contains(blocks[0].Text, want) {
			t.Errorf("tables lack %q:\n%s", want, blocks[0].Text)
		}
	}
	if strings.Contains(blocks[0].Text, "`lockcheck run") || !strings.Contains(blocks[1].Text, "- **no-fault**: safe. `lockcheck run --topology=redlock`") {
		t.Errorf("the tables and the rows are not apart:\n%s\n%s", blocks[0].Text, blocks[1].Text)
	}

	readme := filepath.Join(dir, "README.md")
	docs := filepath.Join(dir, "redlock.md")
	none := filepath.Join(dir, "none.md")
	write := func(path, s string) {
		if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	mark := func(name, inner string) string { return BeginMarker(name) + "\n" + inner + EndMarker(name) + "\n" }
	write(readme, "# r\n\n"+mark("make claims", "old\n")+"\nend\n")
	write(docs, "# d\n"+mark("make claims", "")+"prose\n"+mark("make claims, rows", "old rows\n"))
	write(none, "# n\n"+mark("make mitigations", "keep\n"))
	for _, p := range []string{readme, docs} {
		if err := CanSplice(p, blocks...); err != nil {
			t.Fatal(err)
		}
		if err := SpliceFile(p, blocks...); err != nil {
			t.Fatal(err)
		}
	}
	read := func(path string) string {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	if got, want := read(readme), "# r\n\n"+mark("make claims", blocks[0].Text)+"\nend\n"; got != want {
		t.Errorf("README:\n%s\nwant\n%s", got, want)
	}
	if got, want := read(docs), "# d\n"+mark("make claims", blocks[0].Text)+"prose\n"+mark("make claims, rows", blocks[1].Text); got != want {
		t.Errorf("docs:\n%s\nwant\n%s", got, want)
	}
	for _, check := range []func(string, ...Block) error{CanSplice, SpliceFile} {
		err := check(none, blocks...)
		if err == nil || !errors.Is(err, ErrNoMarker) || err.Error() != none+": no marker line "+BeginMarker("make claims") {
			t.Errorf("a page without the table's markers: %v", err)
		}
	}
	if got := read(none); got != "# n\n"+mark("make mitigations", "keep\n") {
		t.Errorf("a page that failed was written:\n%s", got)
	}
	// an unpaired marker of the second block fails the page, and the
	// first block is not written alone
	write(docs, "# d\n"+mark("make claims", "")+BeginMarker("make claims, rows")+"\n")
	if err := SpliceFile(docs, blocks...); err == nil || errors.Is(err, ErrNoMarker) {
		t.Errorf("unpaired rows marker: %v", err)
	}
	if got := read(docs); got != "# d\n"+mark("make claims", "")+BeginMarker("make claims, rows")+"\n" {
		t.Errorf("a page that failed was written:\n%s", got)
	}
}
