package reports

import (
	"fmt"
	"html/template"
	"os"
	"path/filepath"
	"strings"
)

// WriteIndex writes dir/index.html (one self-contained page), dir/matrix.json
// and dir/junit.xml.
func WriteIndex(dir string, idx *Index) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("write index: %w", err)
	}
	if err := WriteJSON(filepath.Join(dir, "matrix.json"), idx); err != nil {
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
	// As of Of cells with an expectation show it; Unexpected says which
	// do not, and why.
	As, Of     int
	Unexpected []string
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
	g.As, g.Of = idx.AsExpected()
	g.Unexpected = idx.Unexpected()
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
.stale-writes{background:#e8e2f5}
.violated{background:#f5b5b5;font-weight:600}
.unknown{background:#dccdf0}
.notreproduced{background:#f3e1c4}
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
{{if .Of}}<p id="expected"><b>As expected: {{.As}} of {{.Of}}</b> cells with an expected outcome (a fault that hands one lock to two clients: VIOLATED without a fence, double holder stopped by fence with one).{{if .Unexpected}} Not as expected:</p><ul>{{range .Unexpected}}<li>{{.}}</li>{{end}}</ul>{{else}}</p>{{end}}{{end}}
<p class="legend">{{range .Totals}}<span class="{{.Outcome.Class}}">{{.Outcome.Label}}: {{.N}}</span>{{end}}</p>
<table id="matrix">
<thead><tr><th>client</th><th>fault</th>{{range .Columns}}<th class="col" title="{{.Reason}}">{{.Server}}{{if .Version}} ({{.Version}}){{end}}<br>{{.Topology}}</th>{{end}}</tr></thead>
<tbody>
{{range .Rows}}<tr><th>{{.Client}}</th><th>{{.Fault}}</th>{{range .Cells}}{{if .}}<td class="cell {{.Outcome.Class}}" data-outcome="{{.Outcome}}" data-server="{{.Server}}" data-topology="{{.Topology}}" data-client="{{.Client}}" data-fault="{{.Fault}}" title="{{.Title}}">{{if .Link}}<a href="{{.Link}}">{{.Text}}</a>{{else}}{{.Text}}{{end}}{{if .Expected}}{{if ne .Outcome .Expected}}{{if .Verdict}}<br><small>expected: {{.Expected.Label}}</small>{{end}}{{end}}{{end}}</td>{{else}}<td class="cell none">·</td>{{end}}{{end}}</tr>
{{end}}</tbody></table>
<dl>
<dt>safe</dt><dd>every check passed.</dd>
<dt>double holder stopped by fence</dt><dd>a fenced client: two clients believed they held the lock at once (allowed), and the resource refused the stale holder's writes (fence check passed).</dd>
<dt>stale writes (unfenced)</dt><dd>an unfenced holder that stalled past its lease wrote late and no two clients believed they held at once: what a correct lock without fences shows in the default workload (the default gate, lock-correct, allows it); only a fence stops it.</dd>
<dt>VIOLATED</dt><dd>the checks named in the cell failed: see the run's report. For the unfenced native client under failover this is the expected finding.</dd>
<dt>not reproduced</dt><dd>no check failed, but the fault could not make its moment (a lock on the primary alone, a second holder within the first one's lease) or the run ended before its aftermath: the run proves nothing about the fault. The cell says why.</dd>
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
