package reports

import (
	"fmt"
	"html/template"
	"os"
	"path/filepath"
	"strings"

	"github.com/lockcheck/lockcheck/compat"
)

// WriteMatrix writes a compat run as dir/matrix.json, dir/matrix.md and
// dir/matrix.html.
func WriteMatrix(dir string, m *compat.Matrix) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("write matrix: %w", err)
	}
	if err := WriteJSON(filepath.Join(dir, "matrix.json"), m); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "matrix.md"), []byte(MatrixMarkdown(m)), 0o644); err != nil {
		return fmt.Errorf("write matrix.md: %w", err)
	}
	f, err := os.Create(filepath.Join(dir, "matrix.html"))
	if err != nil {
		return fmt.Errorf("write matrix.html: %w", err)
	}
	defer f.Close()
	if err := matrixPage.Execute(f, grid(m)); err != nil {
		return fmt.Errorf("render matrix.html: %w", err)
	}
	return nil
}

// matrixGrid is the matrix laid out as rows of checks and columns of
// build × topology.
type matrixGrid struct {
	Generated string
	Columns   []compat.Column
	Rows      []matrixRow
	Totals    map[string]int
}

type matrixRow struct {
	Check string
	Cells []*compat.Cell
}

func colKey(server, topo string) string { return server + "/" + topo }

func grid(m *compat.Matrix) matrixGrid {
	g := matrixGrid{Generated: m.Generated, Columns: m.Columns, Totals: map[string]int{}}
	index := map[string]int{}
	for i, c := range m.Columns {
		index[colKey(c.Server, c.Topology)] = i
	}
	rows := map[string]*matrixRow{}
	var order []string
	for _, chk := range compat.Cases() {
		order = append(order, chk.Name)
	}
	order = append(order, compat.MixedCases()...)
	for i := range m.Cells {
		c := &m.Cells[i]
		g.Totals[string(c.Outcome)]++
		r, ok := rows[c.Case]
		if !ok {
			r = &matrixRow{Check: c.Case, Cells: make([]*compat.Cell, len(m.Columns))}
			rows[c.Case] = r
		}
		if j, ok := index[colKey(c.Server, c.Topology)]; ok {
			r.Cells[j] = c
		}
	}
	for _, name := range order {
		if r, ok := rows[name]; ok {
			g.Rows = append(g.Rows, *r)
		}
	}
	return g
}

// MatrixMarkdown renders the matrix as a Markdown table: one row per
// check, one column per build and topology, the outcome in each cell.
func MatrixMarkdown(m *compat.Matrix) string {
	g := grid(m)
	var b strings.Builder
	fmt.Fprintf(&b, "# Lock command compatibility\n\nGenerated %s. pass: %d, fail: %d, unsupported: %d, unavailable: %d.\n\n",
		m.Generated, g.Totals["pass"], g.Totals["fail"], g.Totals["unsupported"], g.Totals["unavailable"])
	b.WriteString("| check |")
	for _, c := range g.Columns {
		v := c.Version
		if v == "" {
			v = c.Status
		}
		fmt.Fprintf(&b, " %s %s (%s) |", c.Server, c.Topology, v)
	}
	b.WriteString("\n|---|")
	for range g.Columns {
		b.WriteString("---|")
	}
	b.WriteString("\n")
	for _, r := range g.Rows {
		fmt.Fprintf(&b, "| %s |", r.Check)
		for _, c := range r.Cells {
			if c == nil {
				b.WriteString(" · |")
				continue
			}
			fmt.Fprintf(&b, " %s |", c.Outcome)
		}
		b.WriteString("\n")
	}
	b.WriteString("\n## Observed replies\n\n")
	for _, r := range g.Rows {
		for _, c := range r.Cells {
			if c == nil || c.Outcome == compat.Unavailable {
				continue
			}
			fmt.Fprintf(&b, "- %s, %s %s: **%s** `%s`", r.Check, c.Server, c.Topology, c.Outcome, mdEscape(c.Observed))
			if c.Outcome == compat.Fail {
				fmt.Fprintf(&b, " (expected: %s)", mdEscape(c.Expected))
			}
			b.WriteString("\n")
		}
	}
	var unavailable []string
	for _, c := range g.Columns {
		if c.Status != "observed" {
			unavailable = append(unavailable, fmt.Sprintf("- %s %s: %s: %s", c.Server, c.Topology, c.Status, c.Reason))
		}
	}
	if len(unavailable) > 0 {
		b.WriteString("\n## Not observed\n\n" + strings.Join(unavailable, "\n") + "\n")
	}
	return b.String()
}

func mdEscape(s string) string { return strings.ReplaceAll(s, "`", "'") }

var matrixPage = template.Must(template.New("matrix").Funcs(template.FuncMap{
	"short": func(s string) string {
		if len(s) > 40 {
			return s[:40] + "…"
		}
		return s
	},
}).Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>lockcheck: lock command compatibility</title>
<style>
body{font:13px system-ui,sans-serif;margin:1.5em;color:#222}
table{border-collapse:collapse}
th,td{border:1px solid #ccc;padding:3px 6px;vertical-align:top}
th{background:#f4f4f4;font-weight:600}
th.col{writing-mode:vertical-rl;transform:rotate(180deg);white-space:nowrap}
td.cell{font-size:11px;max-width:14em;overflow:hidden}
.pass{background:#cdeccd}.fail{background:#f5b5b5}.unsupported{background:#e4e4e4;color:#555}.unavailable{background:#fff;color:#999}.none{background:#fafafa}
.legend span{padding:2px 8px;margin-right:6px;border:1px solid #ccc}
</style></head><body>
<h1>Lock command compatibility</h1>
<p>Generated {{.Generated}}. Every cell is a reply observed on a real server; hover a cell for the full reply and the expectation.</p>
<p class="legend"><span class="pass">pass {{index .Totals "pass"}}</span><span class="fail">fail {{index .Totals "fail"}}</span><span class="unsupported">unsupported {{index .Totals "unsupported"}}</span><span class="unavailable">unavailable {{index .Totals "unavailable"}}</span></p>
<table id="matrix">
<thead><tr><th>check</th>{{range .Columns}}<th class="col" title="{{.Status}} {{.Reason}}">{{.Server}} {{.Topology}}{{if .Version}} ({{.Version}}){{else}} ({{.Status}}){{end}}</th>{{end}}</tr></thead>
<tbody>
{{range .Rows}}<tr><th>{{.Check}}</th>{{range .Cells}}{{if .}}<td class="cell {{.Outcome}}" data-outcome="{{.Outcome}}" title="{{.Observed}}{{if .Expected}} | expected: {{.Expected}}{{end}}">{{.Outcome}}<br>{{short .Observed}}</td>{{else}}<td class="cell none">·</td>{{end}}{{end}}</tr>
{{end}}</tbody></table>
{{range .Columns}}{{if ne .Status "observed"}}<p class="unavailable"><b>{{.Server}} {{.Topology}}</b>: {{.Status}}: {{.Reason}}</p>{{end}}{{end}}
</body></html>
`))
