package reports

import (
	"encoding/json"
	"encoding/xml"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/net/html"

	"github.com/lockcheck/lockcheck/checker"
)

// runResult is a finished run's result with the given check statuses and
// counts, in CheckNames order.
func runResult(client string, verdict checker.Verdict, checks map[string]checker.Check) RunResult {
	rr := RunResult{Verdict: verdict, Server: "valkey-9.1", Version: "9.1.2", Client: client, Ops: 1200, Seed: 42, DurationMs: 40000}
	for _, name := range checker.CheckNames {
		c, ok := checks[name]
		if !ok {
			c = checker.Check{Status: checker.Pass}
		}
		c.Name = name
		rr.Checks = append(rr.Checks, c)
	}
	return rr
}

// testIndex has one cell of every outcome.
func testIndex() *Index {
	idx := &Index{
		Generated: "2026-11-30T00:00:00Z", Seed: 1, Duration: "40s", TTL: "15s", Elapsed: "7m",
		Columns: []IndexColumn{
			{Server: "valkey-9.1", Topology: "sentinel", Version: "9.1.2"},
			{Server: "valkey-9.1", Topology: "cluster", Version: "9.1.2"},
			{Server: "valkey-9.2-rc", Topology: "standalone", Reason: "no local image"},
		},
		Rows: []IndexRow{{"native", "kill-primary"}, {"fenced", "kill-primary"}, {"native", "clock-jump"}},
	}
	cell := func(server, topo, client, fault string) IndexCell {
		dir := strings.Join([]string{server, topo, client, fault}, "-")
		return IndexCell{Server: server, Topology: topo, Client: client, Fault: fault, Dir: dir, Link: dir + "/report.html"}
	}
	violated := cell("valkey-9.1", "sentinel", "native", "kill-primary")
	violated.SetResult(runResult("native", checker.Violated, map[string]checker.Check{
		checker.DoubleHolder: {Status: checker.Fail, Count: 2},
		checker.Fence:        {Status: checker.Skipped},
	}), false)
	safe := cell("valkey-9.1", "cluster", "native", "kill-primary")
	safe.SetResult(runResult("native", checker.Safe, map[string]checker.Check{checker.Fence: {Status: checker.Skipped}}), false)
	fenced := cell("valkey-9.1", "sentinel", "fenced", "kill-primary")
	fenced.SetResult(runResult("fenced", checker.Safe, map[string]checker.Check{
		checker.DoubleHolder: {Status: checker.Allowed, Count: 3},
	}), false)
	unknown := cell("valkey-9.1", "cluster", "fenced", "kill-primary")
	unknown.SetResult(runResult("fenced", checker.Undecided, map[string]checker.Check{
		checker.Linearizability: {Status: checker.Unknown},
	}), false)
	interrupted := cell("valkey-9.1", "sentinel", "native", "clock-jump")
	interrupted.SetResult(runResult("native", checker.Safe, nil), true)
	failed := cell("valkey-9.1", "cluster", "native", "clock-jump")
	failed.Outcome, failed.Reason, failed.Link = CellError, "start cluster: timeout", failed.Dir+"/lockcheck.log"
	idx.Cells = []IndexCell{violated, safe, fenced, unknown, interrupted, failed}
	for _, r := range idx.Rows {
		na := r.Fault == "kill-primary"
		c := IndexCell{Server: "valkey-9.2-rc", Topology: "standalone", Client: r.Client, Fault: r.Fault, Outcome: CellUnavailable, Reason: "no local image"}
		if na {
			c.Outcome, c.Reason = CellNA, "kill-primary does not fit a standalone topology"
		}
		idx.Cells = append(idx.Cells, c)
	}
	return idx
}

func TestClassifyRun(t *testing.T) {
	idx := testIndex()
	want := []struct {
		outcome CellOutcome
		text    string
	}{
		{CellViolated, "VIOLATED: double_holder (2)"},
		{CellSafe, "safe"},
		{CellFenced, "double holder stopped by fence"},
		{CellUnknown, "unknown"},
		{CellInterrupted, "interrupted"},
		{CellError, "error"},
	}
	for i, w := range want {
		c := idx.Cells[i]
		if c.Outcome != w.outcome || c.Text() != w.text {
			t.Errorf("cell %d (%s %s %s): %s %q, want %s %q", i, c.Topology, c.Client, c.Fault, c.Outcome, c.Text(), w.outcome, w.text)
		}
	}
	if !idx.Cells[2].Fenced || idx.Cells[0].Fenced {
		t.Errorf("fenced: %v and %v, want the fenced client's run fenced and the native one's not", idx.Cells[2].Fenced, idx.Cells[0].Fenced)
	}
	for _, c := range idx.Cells {
		if c.FenceViolated() {
			t.Errorf("%s %s: a fence violation where none failed", c.Topology, c.Client)
		}
	}
	bad := IndexCell{}
	bad.SetResult(runResult("fenced", checker.Violated, map[string]checker.Check{checker.Fence: {Status: checker.Fail, Count: 1}}), false)
	if !bad.FenceViolated() || bad.Text() != "VIOLATED: fence (1)" {
		t.Errorf("a fenced run whose fence check failed: FenceViolated %v, text %q", bad.FenceViolated(), bad.Text())
	}
}

// TestIndexHTMLHasEveryCellAndLink parses index.html and finds every cell
// at its row and column, with its outcome, its text and its link.
func TestIndexHTMLHasEveryCellAndLink(t *testing.T) {
	idx := testIndex()
	dir := t.TempDir()
	if err := WriteIndex(dir, idx); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(filepath.Join(dir, "index.html"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	doc, err := html.Parse(f)
	if err != nil {
		t.Fatalf("index.html does not parse: %v", err)
	}
	type seen struct{ outcome, text, link, title string }
	found := map[string]seen{}
	external := 0
	indexWalk(doc, func(n *html.Node) {
		switch n.Data {
		case "link", "script", "img":
			external++
		case "td":
			if indexAttr(n, "data-outcome") == "" {
				t.Errorf("a cell without an outcome: %q", indexText(n))
				return
			}
			key := strings.Join([]string{indexAttr(n, "data-server"), indexAttr(n, "data-topology"), indexAttr(n, "data-client"), indexAttr(n, "data-fault")}, " ")
			s := seen{outcome: indexAttr(n, "data-outcome"), text: indexText(n), title: indexAttr(n, "title")}
			indexWalk(n, func(a *html.Node) {
				if a.Data == "a" {
					s.link = indexAttr(a, "href")
				}
			})
			if !strings.Contains(indexAttr(n, "class"), CellOutcome(s.outcome).Class()) {
				t.Errorf("cell %s: class %q lacks %q", key, indexAttr(n, "class"), CellOutcome(s.outcome).Class())
			}
			found[key] = s
		}
	})
	if external > 0 {
		t.Errorf("%d external resources: the page must be self-contained", external)
	}
	for _, c := range idx.Cells {
		key := strings.Join([]string{c.Server, c.Topology, c.Client, c.Fault}, " ")
		s, ok := found[key]
		if !ok {
			t.Errorf("cell %s is not in the page", key)
			continue
		}
		if s.outcome != string(c.Outcome) || s.text != c.Text() || s.link != c.Link {
			t.Errorf("cell %s: outcome %q text %q link %q, want %q %q %q", key, s.outcome, s.text, s.link, c.Outcome, c.Text(), c.Link)
		}
		if c.Reason != "" && !strings.Contains(s.title, c.Reason) {
			t.Errorf("cell %s: title %q lacks the reason %q", key, s.title, c.Reason)
		}
	}
	if len(found) != len(idx.Rows)*len(idx.Columns) {
		t.Errorf("%d cells in the page, want %d (rows × columns)", len(found), len(idx.Rows)*len(idx.Columns))
	}
}

// TestIndexJSONAndJUnit reads matrix.json and junit.xml back: every cell
// in the JSON, one suite per run or missing run, none for n/a cells.
func TestIndexJSONAndJUnit(t *testing.T) {
	idx := testIndex()
	dir := t.TempDir()
	if err := WriteIndex(dir, idx); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "matrix.json"))
	if err != nil {
		t.Fatal(err)
	}
	var back Index
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if len(back.Cells) != len(idx.Cells) || back.Cells[2].Outcome != CellFenced || back.Cells[0].Failed[0] != "double_holder (2)" {
		t.Errorf("matrix.json does not hold the cells: %s", b)
	}
	b, err = os.ReadFile(filepath.Join(dir, "junit.xml"))
	if err != nil {
		t.Fatal(err)
	}
	var j JUnit
	if err := xml.Unmarshal(b, &j); err != nil {
		t.Fatal(err)
	}
	// 5 runs, 1 error, 1 unavailable; 2 n/a have no suite.
	if len(j.Suites) != 7 {
		t.Errorf("%d suites, want 7:\n%s", len(j.Suites), b)
	}
	if j.Fails != 1 || j.Errors != 2 || j.Skipped != 3 {
		t.Errorf("failures %d errors %d skipped %d, want 1 (double_holder), 2 (unknown, error), 3 (two native fence checks, unavailable)", j.Fails, j.Errors, j.Skipped)
	}
}

func indexWalk(n *html.Node, f func(*html.Node)) {
	if n.Type == html.ElementNode {
		f(n)
	}
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		indexWalk(c, f)
	}
}

func indexAttr(n *html.Node, name string) string {
	for _, a := range n.Attr {
		if a.Key == name {
			return a.Val
		}
	}
	return ""
}

func indexText(n *html.Node) string {
	var b strings.Builder
	var text func(*html.Node)
	text = func(n *html.Node) {
		if n.Type == html.TextNode {
			b.WriteString(n.Data)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			text(c)
		}
	}
	text(n)
	return strings.TrimSpace(b.String())
}
