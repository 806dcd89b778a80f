package reports

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/net/html"

	"github.com/lockcheck/lockcheck/checker"
	"github.com/lockcheck/lockcheck/history"
	"github.com/lockcheck/lockcheck/history/synth"
)

func op(w int, key string, kind history.Kind, tok string, out history.Outcome, callMs, retMs float64) history.Op {
	o := history.Op{Client: w, Worker: w, Key: key, Kind: kind, Token: tok, Outcome: out,
		Call: int64(callMs * 1e6), Return: int64(retMs * 1e6)}
	if kind == history.Acquire || kind == history.Extend {
		o.TTLms = 1000
	}
	return o
}

// doubleHolder is a failover: a on k1 holds through a kill of the
// primary, b takes k1 as well; k2 is quiet.
func doubleHolder() *history.History {
	h := &history.History{
		Meta: history.Meta{Server: "valkey-9.1", Topology: "sentinel", Client: "fenced", Fenced: true, TTLms: 1000, Faults: []string{"kill-primary"}},
		Ops: []history.Op{
			op(1, "lock:{k1}", history.Acquire, "a1", history.OK, 0, 1),
			op(3, "lock:{k2}", history.Acquire, "c1", history.OK, 2, 3),
			op(3, "lock:{k2}", history.Release, "c1", history.OK, 50, 51),
			op(2, "lock:{k1}", history.Acquire, "b1", history.OK, 500, 501),
			op(1, "lock:{k1}", history.Write, "a1", history.OK, 600, 601),
			op(1, "lock:{k1}", history.Extend, "a1", history.Fail, 700, 701),
		},
		Faults: []history.Fault{{Name: "kill-primary", Target: "primary", Start: 400e6, End: 450e6}},
	}
	h.Ops[0].Fence, h.Ops[0].HasFence = 1, true
	h.Ops[3].Fence, h.Ops[3].HasFence = 1, true
	h.Ops[4].Fence, h.Ops[4].HasFence = 1, true
	h.Sort()
	h.Meta.DurationNs = h.End()
	return h
}

func check(t *testing.T, h *history.History) *checker.Result {
	t.Helper()
	res, err := checker.Run(context.Background(), h, checker.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// walk calls f on every element node.
func walk(n *html.Node, f func(*html.Node)) {
	if n.Type == html.ElementNode {
		f(n)
	}
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		walk(c, f)
	}
}

func attr(n *html.Node, name string) string {
	for _, a := range n.Attr {
		if a.Key == name {
			return a.Val
		}
	}
	return ""
}

func TestTimelineHasASVGPerKeyAndRedOverlaps(t *testing.T) {
	h := doubleHolder()
	res := check(t, h)
	if c, _ := res.Check(checker.DoubleHolder); c.Status != checker.Fail {
		t.Fatalf("double_holder %s: the test history should have one", c.Status)
	}
	var b bytes.Buffer
	if err := RenderReport(&b, h, res, "", "lockcheck replay runs/x", TimelineOptions{}); err != nil {
		t.Fatal(err)
	}
	doc, err := html.Parse(bytes.NewReader(b.Bytes()))
	if err != nil {
		t.Fatalf("report does not parse: %v", err)
	}
	if !bytes.Contains(b.Bytes(), []byte("<code>lockcheck replay runs/x</code>")) {
		t.Error("the report does not show the replay command")
	}
	svgs := map[string]bool{}
	overlaps, faults, holds, writes := 0, 0, 0, 0
	walk(doc, func(n *html.Node) {
		class := attr(n, "class")
		switch {
		case n.Data == "svg":
			svgs[attr(n, "data-key")] = true
		case n.Data == "rect" && class == "overlap":
			overlaps++
		case n.Data == "rect" && class == "fault":
			faults++
		case n.Data == "rect" && class == "hold":
			holds++
		case n.Data == "line" && strings.HasPrefix(class, "write"):
			writes++
		case n.Data == "script" || n.Data == "link":
			t.Errorf("report needs the network or scripts: <%s>", n.Data)
		}
	})
	if !svgs["lock:{k1}"] || !svgs["lock:{k2}"] || len(svgs) != 2 {
		t.Errorf("svgs for %v, want one per key", svgs)
	}
	if overlaps != 3 { // the findings band and both holders' lanes
		t.Errorf("%d overlap marks, want 3", overlaps)
	}
	if faults != 2 || holds != 3 || writes != 1 {
		t.Errorf("%d fault bands, %d holds, %d writes; want 2, 3, 1", faults, holds, writes)
	}
	if !strings.Contains(b.String(), "#d62728") {
		t.Error("overlaps are not red")
	}
}

func TestTimelineWindowOnLongKeys(t *testing.T) {
	h := synth.Generate(5, 20000, 1, 5)
	res := check(t, h)
	var b bytes.Buffer
	if err := RenderReport(&b, h, res, "", "lockcheck replay runs/x", TimelineOptions{MaxHolds: 50}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "of ") || !strings.Contains(b.String(), "holds") {
		t.Error("long key drawn without saying which part")
	}
	if n := strings.Count(b.String(), `class="hold"`); n > 50 {
		t.Errorf("%d holds drawn, want at most 50", n)
	}
}

func TestWriteReportFiles(t *testing.T) {
	dir := t.TempDir()
	h := doubleHolder()
	res := check(t, h)
	if err := WriteReport(dir, h, res, ""); err != nil {
		t.Fatal(err)
	}
	page, err := os.ReadFile(filepath.Join(dir, "report.html"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(page), `href="linearizability.html"`) {
		t.Error("report does not link porcupine's page")
	}
	// the double holder explained, on the page and on the terminal
	why := "Worker 1 held lock:{k1} from 0.00 s (its acquire&#39;s OK)"
	if !strings.Contains(string(page), `<span class="why">`) || !strings.Contains(string(page), why) {
		t.Errorf("report.html does not explain the double holder (%q)", why)
	}
	var term bytes.Buffer
	WriteVerdict(&term, NewRunResult(h, res, nil), dir)
	if !strings.Contains(term.String(), "why double_holder: Worker 1 held lock:{k1} from 0.00 s") {
		t.Errorf("the terminal explains no failing check:\n%s", term.String())
	}
	lin, err := os.ReadFile(filepath.Join(dir, "linearizability.html"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"kill-primary", "double holders", "acquire(a1"} {
		if !strings.Contains(string(lin), want) {
			t.Errorf("linearizability.html lacks %q", want)
		}
	}
}

func TestLinearizabilityPageShowsFailingSegment(t *testing.T) {
	h := &history.History{Ops: []history.Op{
		op(1, "k", history.Acquire, "a1", history.OK, 0, 1),
		op(2, "k", history.Release, "b1", history.OK, 10, 11), // b never held it
	}}
	res := check(t, h)
	path := filepath.Join(t.TempDir(), "lin.html")
	what, err := WriteLinearizability(path, h, res)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(what, "not linearizable") || !strings.Contains(what, "Illegal") {
		t.Errorf("page described as %q", what)
	}
	b, _ := os.ReadFile(path)
	if !strings.Contains(string(b), "release(b1)") {
		t.Error("page lacks the offending release")
	}
}

// TestLinearizabilityPagePerFailingPartition: two keys whose partitions
// are both illegal get a page each, from the check's own searches, and the
// main page lists them.
func TestLinearizabilityPagePerFailingPartition(t *testing.T) {
	h := &history.History{Ops: []history.Op{
		op(1, "k1", history.Acquire, "a1", history.OK, 0, 1),
		op(2, "k1", history.Release, "b1", history.OK, 10, 11),
		op(3, "k2", history.Acquire, "c1", history.OK, 0, 1),
		op(4, "k2", history.Release, "d1", history.OK, 10, 11),
	}}
	res := check(t, h)
	if res.Picture == nil || !res.Picture.Failing || len(res.Picture.Parts) != 2 {
		t.Fatalf("picture %+v", res.Picture)
	}
	dir := t.TempDir()
	what, err := WriteLinearizability(filepath.Join(dir, "lin.html"), h, res)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(what, "2 partitions") {
		t.Errorf("page described as %q", what)
	}
	list, _ := os.ReadFile(filepath.Join(dir, "lin.html"))
	for i, want := range []string{"release(b1)", "release(d1)"} {
		name := fmt.Sprintf("lin-%d.html", i+1)
		if !strings.Contains(string(list), name) {
			t.Errorf("the list lacks %s", name)
		}
		b, _ := os.ReadFile(filepath.Join(dir, name))
		if !strings.Contains(string(b), want) {
			t.Errorf("%s lacks %s", name, want)
		}
	}
}

// A measurement of the default gate has no controls: its rows meet the
// goal by the mutant's runs alone, and its table says which scenario ran.
func TestGateCatchRateMarkdown(t *testing.T) {
	cr := &CatchRate{Server: "valkey-9.1", Version: "9.1.2", Topology: "standalone", Runs: 20, Complete: true, Gate: "6 clients on 1 key(s), TTL 1s",
		Rows: []CatchRow{
			{Mutant: "mutant-del", Breaks: "lock-correct", Why: "a plain DEL", MutantRuns: 20, Caught: 20, CaughtBy: map[string]int{"lock-correct": 20, "linearizability": 20}},
			{Mutant: "mutant-reacquire", Breaks: "lock-correct", Why: "a quiet re-acquire", MutantRuns: 20, Caught: 18, CaughtBy: map[string]int{"lock-correct": 18}},
		}}
	var b strings.Builder
	CatchRateMarkdown(&b, cr)
	md := b.String()
	for _, want := range []string{"Every mutant ran the one scenario: 6 clients on 1 key(s), TTL 1s.",
		"| mutant-del | a plain DEL | 20 of 20 | linearizability: 20 | met |",
		"| mutant-reacquire | a quiet re-acquire | 18 of 20 | none | **not met** |"} {
		if !strings.Contains(md, want) {
			t.Errorf("the gate's table lacks %q:\n%s", want, md)
		}
	}
}

// A fault that made a new primary or moved the slot marks, on every key's
// timeline, the instant the new owner was first seen serving, and names it.
func TestTimelineMarksTheNewOwner(t *testing.T) {
	h := doubleHolder()
	h.Faults[0].Name, h.Faults[0].Target = "migrate-slot", "n2"
	h.Faults[0].Promoted, h.Faults[0].PromotedAt = "n0", 430e6
	var b bytes.Buffer
	if err := RenderReport(&b, h, check(t, h), "", "", TimelineOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`<line class="owner"`, "n0 serves the key (before it, n2)", `<text class="owner"`} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("the report lacks %q", want)
		}
	}
}
