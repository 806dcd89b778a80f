package reports

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/net/html"

	"github.com/lockcheck/lockcheck/compat"
)

// TestMatrixHTMLHasEveryCell parses matrix.html and finds one table cell per
// observation, coloured by its outcome, with the reply in its title.
func TestMatrixHTMLHasEveryCell(t *testing.T) {
	m := &compat.Matrix{
		Generated: "2026-11-30T00:00:00Z",
		Columns: []compat.Column{
			{Server: "valkey-9.1", Version: "9.1.2", Topology: "standalone", Status: "observed"},
			{Server: "valkey-8.1", Version: "8.1.1", Topology: "standalone", Status: "observed"},
			{Server: "valkey-9.0", Topology: "standalone", Status: "unavailable", Reason: "no image"},
			{Server: "valkey-9.1", Version: "9.1.2", Topology: compat.MixedTopology("valkey-8.0"), Status: "observed"},
		},
		Cells: []compat.Cell{
			{Server: "valkey-9.1", Topology: "standalone", Case: "release/delifeq-held", Outcome: compat.Pass, Observed: "1; EXISTS 0"},
			{Server: "valkey-8.1", Topology: "standalone", Case: "release/delifeq-held", Outcome: compat.Unsupported, Observed: "ERR unknown command 'DELIFEQ'"},
			{Server: "valkey-9.0", Topology: "standalone", Case: "release/delifeq-held", Outcome: compat.Unavailable, Observed: "no image"},
			{Server: "valkey-9.1", Topology: "standalone", Case: "acquire/free", Outcome: compat.Fail, Observed: "<nil>", Expected: "OK"},
			{Server: "valkey-9.1", Topology: compat.MixedTopology("valkey-8.0"), Case: "mixed/set-ifeq", Outcome: compat.Pass, Observed: "primary's value b, n1's value a"},
		},
	}
	dir := t.TempDir()
	if err := WriteMatrix(dir, m); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(filepath.Join(dir, "matrix.html"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	doc, err := html.Parse(f)
	if err != nil {
		t.Fatalf("matrix.html does not parse: %v", err)
	}
	found := map[string]string{}
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.ElementNode && n.Data == "td" {
			var outcome, title string
			for _, a := range n.Attr {
				switch a.Key {
				case "data-outcome":
					outcome = a.Val
				case "title":
					title = a.Val
				}
			}
			if outcome != "" {
				found[title] = outcome
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(doc)
	for _, c := range m.Cells {
		var got string
		for title, outcome := range found {
			if strings.HasPrefix(title, c.Observed) {
				got = outcome
			}
		}
		if got != string(c.Outcome) {
			t.Errorf("cell %s %s: outcome %q in the page, want %q", c.Server, c.Case, got, c.Outcome)
		}
	}
	if len(found) != len(m.Cells) {
		t.Errorf("%d cells in the page, want %d", len(found), len(m.Cells))
	}
	md, _ := os.ReadFile(filepath.Join(dir, "matrix.md"))
	if !strings.Contains(string(md), "| release/delifeq-held | pass | unsupported | unavailable |") || !strings.Contains(string(md), "| mixed/set-ifeq |") {
		t.Errorf("matrix.md lacks the row:\n%s", md)
	}
}
