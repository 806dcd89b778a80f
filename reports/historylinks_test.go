package reports

import (
	"os"
	"path/filepath"
	"testing"
)

// A table spliced into a page links each kept history from the page's
// folder to the folder that holds it (the first of several shards' that
// does); a history no folder holds loses its link, and the measurement's
// own table is left as it was.
func TestLinkedFrom(t *testing.T) {
	root := t.TempDir()
	shard := filepath.Join(root, "docs", "measured", "shard-2")
	if err := os.MkdirAll(filepath.Join(shard, "histories"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(shard, "histories", "w.json"), []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	c := &Claims{Table: TableReportCard, Rows: []ClaimRow{{Claim: "cluster/none", Card: CardTally{WorstRun: "histories/w.json"},
		Details: []ClaimRun{{History: "histories/w.json"}, {History: "histories/gone.json"}, {}}}}}
	got := c.LinkedFrom(filepath.Join(root, "docs", "page.md"), []string{filepath.Join(root, "shard-1"), shard})
	r := got.Rows[0]
	if r.Card.WorstRun != "measured/shard-2/histories/w.json" || r.Details[0].History != "measured/shard-2/histories/w.json" {
		t.Errorf("links from docs/page.md: worst %q, run %q; want measured/shard-2/histories/w.json", r.Card.WorstRun, r.Details[0].History)
	}
	if r.Details[1].History != "" || r.Details[2].History != "" {
		t.Errorf("a history no folder holds, and a run with none: %q, %q", r.Details[1].History, r.Details[2].History)
	}
	if c.Rows[0].Card.WorstRun != "histories/w.json" || c.Rows[0].Details[0].History != "histories/w.json" {
		t.Errorf("LinkedFrom changed the measurement's own table: %+v", c.Rows[0])
	}
}
