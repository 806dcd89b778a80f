package reports

import (
	"fmt"
	"html/template"
	"os"
	"path/filepath"
	"strings"

	"github.com/lockcheck/lockcheck/checker"
)

// Index is a lockcheck matrix: one chaos run per client × fault on every
// build × topology. WriteIndex renders it as index.html, matrix.json and
// junit.xml.
type Index struct {
	Generated string `json:"generated"`
	// Seed is the matrix's seed; every cell's run derives its own from it.
	Seed     int64  `json:"seed"`
	Duration string `json:"duration"`
	TTL      string `json:"ttl"`
	Elapsed  string `json:"elapsed"`
	// Complete is false while the matrix runs and after it was stopped.
	Complete bool `json:"complete"`
	// Shard and Shards say which part of a sharded matrix this index
	// shows (Shards 0: the whole matrix; after a merge, the shards joined).
	Shard   int           `json:"shard,omitempty"`
	Shards  int           `json:"shards,omitempty"`
	Columns []IndexColumn `json:"columns"`
	Rows    []IndexRow    `json:"rows"`
	Cells   []IndexCell   `json:"cells"`
}

// IndexColumn is one build on one topology.
type IndexColumn struct {
	Server   string `json:"server"`
	Topology string `json:"topology"`
	// Version is what the servers reported, once a run has started.
	Version string `json:"version,omitempty"`
	// Reason says why the build is unavailable ("" when it is not).
	Reason string `json:"reason,omitempty"`
}

// IndexRow is one client under one fault.
type IndexRow struct {
	Client string `json:"client"`
	Fault  string `json:"fault"`
}

// CellOutcome is what one cell of the matrix shows.
type CellOutcome string

const (
	// CellSafe: every check passed.
	CellSafe CellOutcome = "safe"
	// CellFenced: a fenced client saw double holders (allowed) and the
	// resource's fence check passed: the fence stopped the stale holder.
	CellFenced CellOutcome = "fenced"
	// CellViolated: at least one check failed.
	CellViolated CellOutcome = "violated"
	// CellUnknown: no check failed but one could not decide.
	CellUnknown CellOutcome = "unknown"
	// CellUnavailable: the build's image cannot be had here.
	CellUnavailable CellOutcome = "unavailable"
	// CellNA: the fault does not fit the topology, or the build lacks a
	// command the client needs.
	CellNA CellOutcome = "n/a"
	// CellError: the topology did not start or the run failed.
	CellError CellOutcome = "error"
	// CellInterrupted: the run was stopped before its end; its partial
	// report is linked.
	CellInterrupted CellOutcome = "interrupted"
	// CellNotRun: the matrix stopped (or has not yet come) before this run.
	CellNotRun CellOutcome = "not run"
	// CellOtherShard: another shard of the matrix runs this cell.
	CellOtherShard CellOutcome = "other shard"
)

// CellOutcomes lists the outcomes in the order the legend shows them.
var CellOutcomes = []CellOutcome{CellSafe, CellFenced, CellViolated, CellUnknown, CellUnavailable, CellNA, CellError, CellInterrupted, CellNotRun, CellOtherShard}

// Label is the outcome's text in a cell.
func (o CellOutcome) Label() string {
	switch o {
	case CellFenced:
		return "double holder stopped by fence"
	case CellViolated:
		return "VIOLATED"
	}
	return string(o)
}

// Class is the outcome's CSS class.
func (o CellOutcome) Class() string {
	switch o {
	case CellNA:
		return "na"
	case CellNotRun:
		return "notrun"
	case CellOtherShard:
		return "othershard"
	}
	return string(o)
}

// IndexCell is one run, or the reason there is none.
type IndexCell struct {
	Server   string      `json:"server"`
	Topology string      `json:"topology"`
	Client   string      `json:"client"`
	Fault    string      `json:"fault"`
	Outcome  CellOutcome `json:"outcome"`
	// Failed names a violated run's failed checks with their counts.
	Failed []string `json:"failed,omitempty"`
	// Reason says why a cell is unavailable, n/a, error or not run.
	Reason string `json:"reason,omitempty"`
	// Dir is the run's folder and Link its report page, both relative to
	// the index.
	Dir  string `json:"dir,omitempty"`
	Link string `json:"link,omitempty"`
	Seed int64  `json:"seed,omitempty"`
	// Replay is the command that repeats this cell's run from its folder.
	Replay  string          `json:"replay,omitempty"`
	Verdict checker.Verdict `json:"verdict,omitempty"`
	Summary string          `json:"summary,omitempty"`
	Ops     int             `json:"ops,omitempty"`
	// Fenced says the client drew fences (its fence check ran).
	Fenced bool         `json:"fenced,omitempty"`
	Checks []IndexCheck `json:"checks,omitempty"`
	// Result is the run's result, for the matrix's JUnit file.
	Result *RunResult `json:"-"`
}

// IndexCheck is one check of a run, without its findings (result.json in
// the run's folder has them).
type IndexCheck struct {
	Name   string         `json:"name"`
	Status checker.Status `json:"status"`
	Count  int            `json:"count"`
}

// SetResult fills a cell from its run's result. interrupted says the run
// was stopped early: its verdict covers part of the run, so only a
// violation (which more operations cannot undo) is shown as such.
func (c *IndexCell) SetResult(rr RunResult, interrupted bool) {
	c.Result = &rr
	c.Verdict, c.Ops, c.Seed = rr.Verdict, rr.Ops, rr.Seed
	c.Checks = nil
	for _, chk := range rr.Checks {
		c.Checks = append(c.Checks, IndexCheck{Name: chk.Name, Status: chk.Status, Count: chk.Count})
	}
	c.Outcome, c.Failed = ClassifyRun(rr)
	fence, _ := rr.Checks.Find(checker.Fence)
	c.Fenced = fence.Status != "" && fence.Status != checker.Skipped
	c.Summary, c.Reason = verdictSummary(rr), ""
	if interrupted && c.Outcome != CellViolated {
		c.Outcome = CellInterrupted
		c.Reason = "stopped before its end; so far: " + c.Summary
	}
}

// ClassifyRun says what a finished run's cell shows and, for a violated
// run, which checks failed. A run whose double_holder check is allowed
// with findings and whose fence check passed is a fenced client that saw
// two holders and whose resource refused the stale one.
func ClassifyRun(rr RunResult) (CellOutcome, []string) {
	class := rr.Class
	if class == "" { // a result.json written before runs had a class
		class = checker.ClassOf(rr.Verdict, rr.Checks)
	}
	switch class {
	case checker.ClassViolated:
		var failed []string
		for _, c := range rr.Checks {
			if c.Status == checker.Fail {
				failed = append(failed, fmt.Sprintf("%s (%d)", c.Name, c.Count))
			}
		}
		return CellViolated, failed
	case checker.ClassFenced:
		return CellFenced, nil
	case checker.ClassSafe:
		return CellSafe, nil
	}
	return CellUnknown, nil
}

// FenceViolated reports whether the cell's run is a fenced client whose
// fence check failed: the one outcome a correct fenced client never has.
func (c IndexCell) FenceViolated() bool {
	for _, chk := range c.Checks {
		if chk.Name == checker.Fence && chk.Status == checker.Fail {
			return c.Fenced
		}
	}
	return false
}

func verdictSummary(rr RunResult) string {
	var parts []string
	for _, c := range rr.Checks {
		parts = append(parts, fmt.Sprintf("%s %s %d", c.Name, c.Status, c.Count))
	}
	return fmt.Sprintf("%s: %d ops, seed %d; %s", rr.Verdict, rr.Ops, rr.Seed, strings.Join(parts, ", "))
}

// Text is the cell's text: the outcome's label, with the failed checks of
// a violated run.
func (c IndexCell) Text() string {
	if c.Outcome == CellViolated && len(c.Failed) > 0 {
		return c.Outcome.Label() + ": " + strings.Join(c.Failed, ", ")
	}
	return c.Outcome.Label()
}

// Title is the cell's hover text.
func (c IndexCell) Title() string {
	var parts []string
	if c.Summary != "" && c.Outcome != CellInterrupted {
		parts = append(parts, c.Summary)
	}
	if c.Reason != "" {
		parts = append(parts, c.Reason)
	}
	if c.Replay != "" {
		parts = append(parts, "replay: "+c.Replay)
	}
	return strings.Join(parts, "\n")
}

// Suite is the cell's JUnit suite: the run's checks, or one skipped case
// (unavailable, not run) or error case (error) that says why there is no
// run. A cell with no run to report (n/a) has none.
func (c IndexCell) Suite() (JUnitSuite, bool) {
	name := fmt.Sprintf("%s %s %s %s", c.Server, c.Topology, c.Client, c.Fault)
	if c.Result != nil {
		if c.Outcome == CellInterrupted {
			name += " (interrupted)"
		}
		return c.Result.Suite(name), true
	}
	jc := JUnitCase{Name: "run", ClassName: name}
	switch c.Outcome {
	case CellUnavailable, CellNotRun:
		jc.Skipped = &JUnitMessage{Message: string(c.Outcome) + ": " + c.Reason}
	case CellError:
		jc.Error = &JUnitMessage{Message: "did not run: " + c.Reason}
	default:
		return JUnitSuite{}, false
	}
	return JUnitSuite{Name: name, Cases: []JUnitCase{jc}}, true
}

// JUnit is the whole matrix as one JUnit report, one suite per cell.
func (idx *Index) JUnit() *JUnit {
	j := &JUnit{Name: "lockcheck matrix"}
	for _, c := range idx.Cells {
		if s, ok := c.Suite(); ok {
			j.Add(s)
		}
	}
	return j
}

// Count counts the cells with an outcome.
func (idx *Index) Count(o CellOutcome) int {
	n := 0
	for _, c := range idx.Cells {
		if c.Outcome == o {
			n++
		}
	}
	return n
}

// WriteIndex writes dir/index.html (one self-contained page), dir/matrix.json
// and dir/junit.xml.
func WriteIndex(dir string, idx *Index) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("write index: %w", err)
	}
	if err := writeJSON(filepath.Join(dir, "matrix.json"), idx); err != nil {
		return err
	}
	if err := idx.JUnit().Write(filepath.Join(dir, "junit.xml")); err != nil {
		return err
	}
	var page strings.Builder
	if err := indexPage.Execute(&page, indexGridOf(idx)); err != nil {
		return fmt.Errorf("render index.html: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "index.html"), []byte(page.String()), 0o644); err != nil {
		return fmt.Errorf("write index.html: %w", err)
	}
	return nil
}

// indexGrid is the index laid out for the page: rows of client × fault,
// columns of build × topology.
type indexGrid struct {
	*Index
	Rows   []indexGridRow
	Totals []indexTotal
	Notes  []IndexCell
	// Unavailable lists each unavailable build once.
	Unavailable []IndexColumn
}

type indexGridRow struct {
	IndexRow
	Cells []*IndexCell
}

type indexTotal struct {
	Outcome CellOutcome
	N       int
}

func indexGridOf(idx *Index) indexGrid {
	g := indexGrid{Index: idx}
	col := map[[2]string]int{}
	for i, c := range idx.Columns {
		col[[2]string{c.Server, c.Topology}] = i
	}
	for _, c := range idx.Columns {
		if c.Reason != "" && (len(g.Unavailable) == 0 || g.Unavailable[len(g.Unavailable)-1].Server != c.Server) {
			g.Unavailable = append(g.Unavailable, c)
		}
	}
	row := map[[2]string]int{}
	for i, r := range idx.Rows {
		row[[2]string{r.Client, r.Fault}] = i
		g.Rows = append(g.Rows, indexGridRow{IndexRow: r, Cells: make([]*IndexCell, len(idx.Columns))})
	}
	for i := range idx.Cells {
		c := &idx.Cells[i]
		ci, okc := col[[2]string{c.Server, c.Topology}]
		ri, okr := row[[2]string{c.Client, c.Fault}]
		if okc && okr {
			g.Rows[ri].Cells[ci] = c
		}
		if c.Outcome == CellError || c.Outcome == CellInterrupted {
			g.Notes = append(g.Notes, *c)
		}
	}
	for _, o := range CellOutcomes {
		if n := idx.Count(o); n > 0 {
			g.Totals = append(g.Totals, indexTotal{o, n})
		}
	}
	return g
}

var indexPage = template.Must(template.New("index").Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>lockcheck matrix</title>
<style>
body{font:13px/1.4 system-ui,sans-serif;margin:1.5em;color:#222}
table{border-collapse:collapse;margin:.5em 0 1em}
th,td{border:1px solid #ccc;padding:4px 8px;vertical-align:top;text-align:left}
th{background:#f4f4f4;font-weight:600}
td.cell{min-width:9em}
td.cell a{color:inherit}
.safe{background:#cdeccd}
.fenced{background:#fde7a6}
.violated{background:#f5b5b5;font-weight:600}
.unknown{background:#dccdf0}
.unavailable{background:#fff;color:#999}
.na{background:#f2f2f2;color:#999}
.error{background:#ffc98f}
.interrupted{background:#e4e4e4}
.notrun{background:#fafafa;color:#999}
.othershard{background:#fff;color:#bbb}
.none{background:#fafafa;color:#bbb}
.legend span{display:inline-block;padding:2px 8px;margin:0 6px 4px 0;border:1px solid #ccc}
dt{font-weight:600}
</style></head><body>
<h1>lockcheck matrix</h1>
<p>Generated {{.Generated}}; seed {{.Seed}}, {{.Duration}} per run, TTL {{.TTL}}, {{.Elapsed}} in all.{{if .Shards}} Shard {{if .Shard}}{{.Shard}} of {{.Shards}}{{else}}merged from {{.Shards}} shards{{end}}.{{end}}{{if not .Complete}} <b>Incomplete:</b> the matrix was stopped or is still running.{{end}}
Each cell is one run on a fresh topology with one fault; the cell links to its report. Hover a cell for its checks and the command that replays it.</p>
<p class="legend">{{range .Totals}}<span class="{{.Outcome.Class}}">{{.Outcome.Label}}: {{.N}}</span>{{end}}</p>
<table id="matrix">
<thead><tr><th>client</th><th>fault</th>{{range .Columns}}<th class="col" title="{{.Reason}}">{{.Server}}{{if .Version}} ({{.Version}}){{end}}<br>{{.Topology}}</th>{{end}}</tr></thead>
<tbody>
{{range .Rows}}<tr><th>{{.Client}}</th><th>{{.Fault}}</th>{{range .Cells}}{{if .}}<td class="cell {{.Outcome.Class}}" data-outcome="{{.Outcome}}" data-server="{{.Server}}" data-topology="{{.Topology}}" data-client="{{.Client}}" data-fault="{{.Fault}}" title="{{.Title}}">{{if .Link}}<a href="{{.Link}}">{{.Text}}</a>{{else}}{{.Text}}{{end}}</td>{{else}}<td class="cell none">·</td>{{end}}{{end}}</tr>
{{end}}</tbody></table>
<dl>
<dt>safe</dt><dd>every check passed.</dd>
<dt>double holder stopped by fence</dt><dd>a fenced client: two clients believed they held the lock at once (allowed), and the resource refused the stale holder's writes (fence check passed).</dd>
<dt>VIOLATED</dt><dd>the checks named in the cell failed: see the run's report. For the unfenced native client under failover this is the expected finding.</dd>
<dt>unknown</dt><dd>no check failed, but one could not decide.</dd>
<dt>unavailable, n/a</dt><dd>no run: the build's image cannot be had here, or the fault does not fit the topology (or the build lacks a command the client needs). Hover for the reason.</dd>
</dl>
{{if .Notes}}<h2>Runs that did not finish</h2><ul>
{{range .Notes}}<li>{{.Server}} {{.Topology}} {{.Client}} {{.Fault}}: {{.Outcome}}: {{.Reason}}{{if .Link}} (<a href="{{.Link}}">files</a>){{end}}</li>
{{end}}</ul>{{end}}
{{range .Unavailable}}<p class="unavailable"><b>{{.Server}}</b>: unavailable: {{.Reason}}</p>
{{end}}
</body></html>
`))
