package reports

import (
	"bytes"
	"fmt"
	"html/template"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/lockcheck/lockcheck/checker"
	"github.com/lockcheck/lockcheck/history"
)

// WriteReport writes a checked run's pictures into dir: report.html (the
// verdict, the checks, their findings and a timeline per key, one
// self-contained file) and linearizability.html (porcupine's page, linked
// from it).
// replay is the command that runs the run again ("" when there is none).
func WriteReport(dir string, h *history.History, res *checker.Result, replay string) error {
	what, err := WriteLinearizability(filepath.Join(dir, "linearizability.html"), h, res)
	if err != nil {
		return err
	}
	var b bytes.Buffer
	if err := RenderReport(&b, h, res, what, replay, TimelineOptions{}); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "report.html"), b.Bytes(), 0o644); err != nil {
		return fmt.Errorf("write report: %w", err)
	}
	return nil
}

// reportPage is what the page template shows.
type reportPage struct {
	Meta      history.Meta
	Duration  string
	Res       *checker.Result
	Picture   string
	Timelines []keyTimeline
	Hidden    int
	Faults    []history.Fault
	Steps     []Step
	Replay    string
}

// RenderReport writes report.html's page to w. picture says what
// linearizability.html shows ("" when there is none).
func RenderReport(w io.Writer, h *history.History, res *checker.Result, picture, replay string, o TimelineOptions) error {
	tl, hidden := timelines(h, res, o)
	p := reportPage{Meta: h.Meta, Duration: time.Duration(h.Meta.DurationNs).Round(time.Millisecond).String(), Res: res,
		Picture: picture, Timelines: tl, Hidden: hidden, Faults: h.Faults, Steps: Steps(h, res.Checks), Replay: replay}
	if err := page.Execute(w, p); err != nil {
		return fmt.Errorf("render report: %w", err)
	}
	return nil
}

var page = template.Must(template.New("report").Funcs(template.FuncMap{
	"secs": secs,
	"node": NodeLine,
	"ms":   func(ns int64) string { return fmt.Sprintf("%d ms", ns/1e6) },
}).Parse(`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>lockcheck: {{.Res.Verdict}} — {{.Meta.Server}} {{.Meta.Topology}} {{.Meta.Client}}</title>
<style>
body { font: 14px/1.4 system-ui, sans-serif; margin: 1.5em; color: #222; }
h1 .verdict { padding: 0 .4em; border-radius: 4px; color: #fff; }
.safe { background: #2ca02c; } .violated { background: #d62728; } .unknown { background: #9467bd; }
table { border-collapse: collapse; margin: .5em 0 1em; }
td, th { border: 1px solid #ccc; padding: 2px 8px; text-align: left; vertical-align: top; }
tr.fail td.status { color: #d62728; font-weight: bold; } tr.unknown td.status { color: #9467bd; font-weight: bold; }
tr.allowed td.status { color: #b8860b; } tr.pass td.status { color: #2ca02c; }
.caption { color: #555; margin: 0; }
.why { color: #444; }
section.key { margin-bottom: 1.2em; }
.legend span { display: inline-block; margin-right: 1em; }
.legend i { display: inline-block; width: 14px; height: 10px; margin-right: 4px; vertical-align: middle; }
</style>
</head>
<body>
<h1>lockcheck <span class="verdict {{.Res.Verdict}}">{{.Res.Verdict}}</span></h1>
<p>{{.Res.Summary}} — exit code {{.Res.ExitCode}}</p>
<table class="meta">
<tr><th>server</th><td>{{.Meta.Server}} {{.Meta.Version}}</td><th>topology</th><td>{{.Meta.Topology}}</td></tr>
<tr><th>client</th><td>{{.Meta.Client}}{{if .Meta.Fenced}} (fenced){{end}}</td><th>seed</th><td>{{.Meta.Seed}}</td></tr>
<tr><th>clients</th><td>{{.Meta.Clients}}</td><th>keys</th><td>{{.Meta.Keys}}</td></tr>
<tr><th>TTL</th><td>{{.Meta.TTLms}} ms</td><th>duration</th><td>{{.Duration}}</td></tr>
<tr><th>operations</th><td>{{.Res.Ops}} on {{.Res.Keys}} keys, {{.Res.Segments}} segments ({{.Res.Porcupine}} searched by porcupine)</td><th>faults</th><td>{{range .Meta.Faults}}{{.}} {{else}}none{{end}}</td></tr>
</table>
{{if .Replay}}<p>Replay this run (same scenario, seed and fault schedule, into a new folder): <code>{{.Replay}}</code></p>{{end}}
<h2>Checks</h2>
<table class="checks">
<tr><th>check</th><th>status</th><th>count</th><th>summary</th></tr>
{{range .Res.Checks}}<tr class="{{.Status}}"><td>{{.Name}}</td><td class="status">{{.Status}}</td><td>{{.Count}}</td><td>{{.Summary}}</td></tr>
{{end}}</table>
{{with .Res.TimeToNotice}}<p>Time to notice, from a lost lock to its holder's first reply that said so: {{.}}.</p>{{end}}
{{if .Picture}}<p>Porcupine's view: <a href="linearizability.html">linearizability.html</a>, showing {{.Picture}}.</p>{{end}}
<h2>Findings</h2>
{{range .Res.Checks}}{{if .Findings}}<details{{if eq .Status "fail"}} open{{end}}>
<summary>{{.Name}}: {{.Count}}{{if .Truncated}} (first {{len .Findings}} listed){{end}}</summary>
<ul>{{range .Findings}}<li>{{if .Allowed}}[allowed] {{end}}{{.Summary}} ({{secs .Start}} to {{secs .End}}){{range .Faults}} — during {{.Name}}{{if .Target}} on {{.Target}}{{end}}{{if .Detail}} ({{.Detail}}){{end}}{{end}}{{if .Explanation}}<br><span class="why">{{.Explanation}}</span>{{end}}</li>
{{end}}</ul>
</details>
{{end}}{{else}}<p>None.</p>{{end}}
{{if .Steps}}<h2>Rolling upgrade</h2>
<p class="caption">Each step holds until the topology is healthy again, and a few seconds more. Nodes as the step left them; "can lead" are the primaries and the replicas a failover may promote.</p>
<table class="steps"><tr><th>step</th><th>from</th><th>to</th><th>servers</th><th>the client's lock commands</th><th>replication</th><th>found in the step</th></tr>
{{range .Steps}}<tr class="{{if .Found}}fail{{else}}pass{{end}}"><td>{{.Detail}}</td><td>{{secs .Start}}</td><td>{{if .End}}{{secs .End}}{{else}}end of run{{end}}</td>
<td>{{range .Nodes}}{{node .}}{{if .CanLead}} (can lead){{end}}<br>{{end}}</td><td>{{.Understood}}</td>
<td>{{range .Links}}{{.}}<br>{{else}}every link up{{end}}{{range .Behind}}<br>{{.}}{{end}}</td><td class="status">{{range $k, $v := .Found}}{{$k}}: {{$v}}<br>{{else}}nothing{{end}}</td></tr>
{{end}}</table>{{end}}
{{if .Faults}}<h2>Faults</h2>
<table><tr><th>fault</th><th>target</th><th>from</th><th>to</th><th>detail</th></tr>
{{range .Faults}}<tr><td>{{.Name}}</td><td>{{.Target}}</td><td>{{secs .Start}}</td><td>{{if .End}}{{secs .End}}{{else}}end of run{{end}}</td><td>{{.Detail}}</td></tr>
{{end}}</table>{{end}}
<h2>Timeline</h2>
<p class="legend"><span><i style="background:#4a78b5"></i>held</span><span><i style="background:#d62728"></i>two holders</span><span><i style="background:#ff7f0e;opacity:.3"></i>fault</span><span><i style="background:#2ca02c"></i>write accepted</span><span><i style="background:#7f7f7f"></i>write rejected</span><span><i style="background:#9467bd"></i>no legal order</span><span><i style="background:#8c564b"></i>TTL problem</span><span><i style="background:#e6a800"></i>lost lock</span><span><i style="background:rgba(74,120,181,.2);outline:1px dashed #4a78b5"></i>lost, holder not yet told</span><span><i style="background:rgba(74,120,181,.2);outline:1px dashed #d62728"></i>lost, holder never told</span></p>
{{range .Timelines}}<section class="key"><h3>{{.Key}}</h3>{{if .Caption}}<p class="caption">{{.Caption}}</p>{{end}}
{{.SVG}}
</section>
{{end}}{{if .Hidden}}<p>{{.Hidden}} more keys are not drawn.</p>{{end}}
</body>
</html>
`))
