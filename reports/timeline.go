package reports

import (
	"fmt"
	"html"
	"html/template"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/lockcheck/lockcheck/checker"
	"github.com/lockcheck/lockcheck/history"
)

// TimelineOptions bound the timeline: a page with a million holds is not
// readable, so a long key is drawn around its first finding.
type TimelineOptions struct {
	// MaxKeys is how many keys get a picture; keys with findings first.
	// Default 40.
	MaxKeys int
	// MaxHolds is how many holds one key's picture shows at most; beyond
	// it the picture covers a window around the key's first finding.
	// Default 300.
	MaxHolds int
	// Width is the picture's width in pixels. Default 1100.
	Width int
}

func (o TimelineOptions) withDefaults() TimelineOptions {
	if o.MaxKeys <= 0 {
		o.MaxKeys = 40
	}
	if o.MaxHolds <= 0 {
		o.MaxHolds = 300
	}
	if o.Width <= 0 {
		o.Width = 1100
	}
	return o
}

// keyTimeline is one key's picture for the page.
type keyTimeline struct {
	Key     string
	Caption string
	SVG     template.HTML
}

// keyData gathers what one key's picture shows.
type keyData struct {
	holds    []checker.Hold
	writes   []history.Op
	findings []checker.Finding
	losses   []checker.Loss
	// total counts the key's holds, of which the checker kept holds.
	total int
}

// timelines draws a picture per key (up to MaxKeys): who held the lock
// when, overlaps in red, fault windows as bands, resource writes as ticks.
// It returns the pictures and how many keys were left out.
func timelines(h *history.History, res *checker.Result, o TimelineOptions) ([]keyTimeline, int) {
	o = o.withDefaults()
	holds, writes, losses := res.Holds, res.Writes, res.Losses
	if holds == nil { // a result checker.Run did not make
		holds, writes = checker.Holds(h), nil
		losses, _ = checker.Notices(h)
		for _, op := range h.Ops {
			if op.Kind == history.Write {
				writes = append(writes, op)
			}
		}
	}
	data := map[string]*keyData{}
	get := func(k string) *keyData {
		d := data[k]
		if d == nil {
			d = &keyData{}
			data[k] = d
		}
		return d
	}
	for _, hd := range holds {
		get(hd.Key).holds = append(get(hd.Key).holds, hd)
	}
	for _, op := range writes {
		get(op.Key).writes = append(get(op.Key).writes, op)
	}
	for _, l := range losses {
		get(l.Key).losses = append(get(l.Key).losses, l)
	}
	for k, n := range res.HeldTotal {
		get(k).total = n
	}
	for _, op := range h.Ops { // keys with no hold and no write
		get(op.Key)
	}
	flagged := map[string]bool{}
	for _, c := range res.Checks {
		for _, f := range c.Findings {
			get(f.Key).findings = append(get(f.Key).findings, f)
			if f.Kind != checker.KindLostLock {
				flagged[f.Key] = true
			}
		}
	}
	keys := make([]string, 0, len(data))
	for k := range data {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if flagged[keys[i]] != flagged[keys[j]] {
			return flagged[keys[i]]
		}
		return keys[i] < keys[j]
	})
	hidden := max(0, len(keys)-o.MaxKeys)
	keys = keys[:min(len(keys), o.MaxKeys)]

	end := h.End()
	for _, hd := range holds {
		end = max(end, hd.End)
	}
	out := make([]keyTimeline, 0, len(keys))
	for _, k := range keys {
		out = append(out, drawKey(k, data[k], h.Faults, end, o))
	}
	return out, hidden
}

// window picks the stretch of a long key to draw: MaxHolds holds around the
// first finding that is not a lost lock, or the first ones.
func window(d *keyData, end int64, o TimelineOptions) (int64, int64, string) {
	n := len(d.holds)
	if n <= o.MaxHolds {
		return 0, end, ""
	}
	sort.Slice(d.holds, func(i, j int) bool { return d.holds[i].Start < d.holds[j].Start })
	at := int64(-1)
	for _, f := range d.findings {
		if f.Kind != checker.KindLostLock && (at < 0 || f.Start < at) {
			at = f.Start
		}
	}
	first := 0
	if at >= 0 {
		first = sort.Search(n, func(i int) bool { return d.holds[i].End >= at })
	}
	lo := max(0, min(first-o.MaxHolds/2, n-o.MaxHolds))
	hi := lo + o.MaxHolds
	a, b := d.holds[lo].Start, d.holds[hi-1].End
	for _, hd := range d.holds[lo:hi] {
		b = max(b, hd.End)
	}
	return a, b, fmt.Sprintf("showing %s to %s: %d of %d holds", secs(a), secs(b), o.MaxHolds, max(n, d.total))
}

func secs(ns int64) string { return fmt.Sprintf("%.3f s", float64(ns)/1e9) }

// colors of the marks, inline so that an SVG copied out of the page keeps
// them.
var colors = map[string]string{
	"overlap":  "#d62728",
	"accepted": "#2ca02c", "rejected": "#7f7f7f", "unknown": "#ff7f0e",
	"illegal_lock": "#9467bd", "illegal_fence": "#9467bd", "timeout": "#c5b0d5", "undecided": "#c5b0d5",
	"stuck": "#8c564b", "no_expiry": "#8c564b",
	"mark": "#d62728", "lost_lock": "#e6a800",
	"unheld": "#4a78b5", "untold": "#d62728",
}

// Layout of one picture.
const (
	labelW = 90
	rowH   = 16
	rowGap = 4
	bandH  = 12
	axisH  = 22
)

// drawKey renders one key's SVG.
func drawKey(key string, d *keyData, faults []history.Fault, end int64, o TimelineOptions) keyTimeline {
	a, b, caption := window(d, end, o)
	if b <= a {
		b = a + 1
	}
	plotW := float64(o.Width - labelW - 10)
	x := func(t int64) float64 {
		t = max(a, min(b, t))
		return labelW + float64(t-a)/float64(b-a)*plotW
	}
	in := func(s, e int64) bool { return e >= a && s <= b }
	lanes := lanesOf(d, in)
	lane := map[int]int{}
	for i, w := range lanes {
		lane[w] = i
	}
	laneY := func(w int) float64 { return float64(bandH + rowGap + lane[w]*(rowH+rowGap)) }
	plotH := bandH + rowGap + len(lanes)*(rowH+rowGap)
	height := plotH + axisH

	var s strings.Builder
	fmt.Fprintf(&s, `<svg class="timeline" data-key="%s" xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d">`,
		html.EscapeString(key), o.Width, height, o.Width, height)
	s.WriteString(`<g font-family="sans-serif" font-size="11" fill="#333">`)
	fmt.Fprintf(&s, `<text class="lane" x="4" y="%d">findings</text>`, bandH-2)
	for _, w := range lanes {
		fmt.Fprintf(&s, `<text class="lane" x="4" y="%.0f">worker %d</text>`, laneY(w)+rowH-4, w)
	}
	s.WriteString(`</g>`)
	for _, w := range lanes {
		fmt.Fprintf(&s, `<line class="lane-rule" stroke="#eee" x1="%d" x2="%d" y1="%.0f" y2="%.0f"/>`, labelW, o.Width-10, laneY(w)+rowH, laneY(w)+rowH)
	}
	// fault windows behind everything
	for _, f := range faults {
		fe := f.End
		if fe == 0 {
			fe = end
		}
		if !in(f.Start, fe) {
			continue
		}
		x0, x1 := x(f.Start), x(fe)
		fmt.Fprintf(&s, `<rect class="fault" fill="#ff7f0e" fill-opacity="0.15" x="%.1f" y="0" width="%.1f" height="%d"><title>%s</title></rect>`,
			x0, max(x1-x0, 2), plotH, html.EscapeString(faultText(f, fe)))
		drawOwnerChange(&s, f, x, in, plotH)
	}
	for _, hd := range d.holds {
		if !in(hd.Start, hd.End) {
			continue
		}
		x0, x1 := x(hd.Start), x(hd.End)
		fmt.Fprintf(&s, `<rect class="hold" fill="#4a78b5" x="%.1f" y="%.0f" width="%.1f" height="%d" rx="2"><title>%s</title></rect>`,
			x0, laneY(hd.Worker), max(x1-x0, 1), rowH, html.EscapeString(holdText(hd)))
	}
	drawLosses(&s, d.losses, x, in, laneY, lane)
	for _, f := range d.findings {
		drawFinding(&s, f, x, in, laneY, lane)
	}
	for _, w := range d.writes {
		if !in(w.Return, w.Return) {
			continue
		}
		class := "accepted"
		switch w.Outcome {
		case history.Fail:
			class = "rejected"
		case history.Unknown:
			class = "unknown"
		}
		xw := x(w.Return)
		fmt.Fprintf(&s, `<line class="write %s" stroke="%s" stroke-width="2" x1="%.1f" x2="%.1f" y1="%.0f" y2="%.0f"><title>%s</title></line>`,
			class, colors[class], xw, xw, laneY(w.Worker)-2, laneY(w.Worker)+rowH+2, html.EscapeString(writeText(w, class)))
	}
	axis(&s, a, b, x, plotH, o.Width)
	s.WriteString(`</svg>`)
	return keyTimeline{Key: key, Caption: caption, SVG: template.HTML(s.String())}
}

// lanesOf lists the workers with a hold, a write or a lost lock drawn,
// one lane each, in order.
func lanesOf(d *keyData, in func(int64, int64) bool) []int {
	workers := map[int]bool{}
	for _, hd := range d.holds {
		if in(hd.Start, hd.End) {
			workers[hd.Worker] = true
		}
	}
	for _, w := range d.writes {
		if in(w.Call, w.Return) {
			workers[w.Worker] = true
		}
	}
	for _, l := range d.losses {
		if in(l.LostAt, l.ToldAt) {
			workers[l.Worker] = true
		}
	}
	lanes := make([]int, 0, len(workers))
	for w := range workers {
		lanes = append(lanes, w)
	}
	slices.Sort(lanes)
	return lanes
}

// drawFinding marks a finding: overlaps in red on both holders' lanes and
// in the findings band; spans without a legal order, and stuck keys, as
// bands; fence and resource findings and lost locks as marks on the op.
func drawFinding(s *strings.Builder, f checker.Finding, x func(int64) float64, in func(int64, int64) bool, laneY func(int) float64, lane map[int]int) {
	if !in(f.Start, f.End) {
		return
	}
	title := html.EscapeString(f.Summary)
	x0, x1 := x(f.Start), x(f.End)
	w := max(x1-x0, 2)
	switch f.Kind {
	case checker.KindDoubleHolder:
		fmt.Fprintf(s, `<rect class="overlap" fill="%s" x="%.1f" y="0" width="%.1f" height="%d"><title>%s</title></rect>`, colors["overlap"], x0, w, bandH, title)
		for _, hd := range f.Holds {
			if _, ok := lane[hd.Worker]; ok {
				fmt.Fprintf(s, `<rect class="overlap" fill="%s" x="%.1f" y="%.0f" width="%.1f" height="%d"><title>%s</title></rect>`, colors["overlap"], x0, laneY(hd.Worker), w, rowH, title)
			}
		}
	case checker.KindIllegalLock, checker.KindIllegalFence, checker.KindTimeout, checker.KindUndecided, checker.KindStuck, checker.KindNoExpiry:
		fmt.Fprintf(s, `<rect class="band %s" fill="%s" x="%.1f" y="0" width="%.1f" height="%d"><title>%s</title></rect>`, f.Kind, colors[string(f.Kind)], x0, w, bandH, title)
	default: // fence, resource and lost-lock findings: mark their operations
		for _, op := range f.Ops {
			if _, ok := lane[op.Worker]; !ok || !in(op.Return, op.Return) {
				continue
			}
			xo, y := x(op.Return), laneY(op.Worker)
			color := colors["mark"]
			if f.Kind == checker.KindLostLock {
				color = colors["lost_lock"]
			}
			fmt.Fprintf(s, `<path class="mark %s" fill="%s" d="M%.1f %.0f l-5 -7 h10 z"><title>%s</title></path>`, f.Kind, color, xo, y, title)
		}
	}
}

// axis draws time ticks under the lanes.
func axis(s *strings.Builder, a, b int64, x func(int64) float64, top, width int) {
	step := niceStep(float64(b-a) / 8)
	y := float64(top) + 2
	fmt.Fprintf(s, `<g stroke="#999"><line class="axis" x1="%d" x2="%d" y1="%.0f" y2="%.0f"/>`, labelW, width-10, y, y)
	var labels strings.Builder
	for t := math.Ceil(float64(a)/step) * step; t <= float64(b); t += step {
		xt := x(int64(t))
		fmt.Fprintf(s, `<line class="axis" x1="%.1f" x2="%.1f" y1="%.0f" y2="%.0f"/>`, xt, xt, y, y+4)
		fmt.Fprintf(&labels, `<text class="tick" x="%.1f" y="%.0f">%s</text>`, xt, y+16, tickLabel(t, step))
	}
	fmt.Fprintf(s, `</g><g font-family="sans-serif" font-size="11" fill="#333" text-anchor="middle">%s</g>`, labels.String())
}

// niceStep rounds a raw step in ns to 1, 2 or 5 times a power of ten.
func niceStep(raw float64) float64 {
	if raw <= 0 {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 5, 10} {
		if raw <= m*p {
			return m * p
		}
	}
	return 10 * p
}

func tickLabel(ns, step float64) string {
	switch {
	case step >= 1e9:
		return fmt.Sprintf("%gs", ns/1e9)
	case step >= 1e6:
		return fmt.Sprintf("%gms", ns/1e6)
	}
	return fmt.Sprintf("%gµs", ns/1e3)
}

// drawOwnerChange marks the instant a fault's new primary (a promoted
// replica, or the new owner of a moved slot) was first seen serving: the
// node that answered the key before it is the window's target, the one
// after it is named here.
func drawOwnerChange(s *strings.Builder, f history.Fault, x func(int64) float64, in func(a, b int64) bool, plotH int) {
	if f.Promoted == "" || f.PromotedAt == 0 || !in(f.PromotedAt, f.PromotedAt) {
		return
	}
	xp := x(f.PromotedAt)
	what := fmt.Sprintf("from %s %s serves the key (before it, %s)", secs(f.PromotedAt), f.Promoted, f.Target)
	fmt.Fprintf(s, `<line class="owner" stroke="#ff7f0e" stroke-width="2" x1="%.1f" x2="%.1f" y1="0" y2="%d"><title>%s</title></line>`, xp, xp, plotH, html.EscapeString(what))
	fmt.Fprintf(s, `<text class="owner" font-family="sans-serif" font-size="10" fill="#b35900" x="%.1f" y="10">%s</text>`, xp+3, html.EscapeString(f.Promoted))
}

func faultText(f history.Fault, end int64) string {
	t := fmt.Sprintf("%s %s %s: %s to %s", f.Name, f.Target, f.Detail, secs(f.Start), secs(end))
	return strings.Join(strings.Fields(t), " ")
}

func holdText(h checker.Hold) string {
	t := fmt.Sprintf("worker %d (client %d) token %s", h.Worker, h.Client, h.Token)
	if h.HasFence {
		t += fmt.Sprintf(" fence %d", h.Fence)
	}
	return t + fmt.Sprintf(": held %s to %s, ended by %s", secs(h.Start), secs(h.End), h.EndedBy)
}

func writeText(w history.Op, class string) string {
	t := fmt.Sprintf("write by worker %d %s at %s", w.Worker, class, secs(w.Return))
	if w.HasFence {
		t += fmt.Sprintf(", fence %d", w.Fence)
	}
	if w.Read != 0 || w.Wrote != 0 {
		t += fmt.Sprintf(", read %d wrote %d", w.Read, w.Wrote)
	}
	return t
}
