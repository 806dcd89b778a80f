package main

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// Row is one line of the results: a figure, the reference it is measured
// next to in the same run, and their ratio. A figure that could not be
// measured is null, and Note says why.
type Row struct {
	Name           string   `json:"name"`
	Value          *float64 `json:"value"`
	Unit           string   `json:"unit"`
	Reference      string   `json:"reference"`
	ReferenceValue *float64 `json:"reference_value"`
	Ratio          *float64 `json:"ratio"`
	Runs           int      `json:"runs"`
	Note           string   `json:"note"`

	// section orders the rows in the table whatever order they were
	// measured in.
	section int
}

// Sections in table order.
const (
	secStartup = iota
	secFailover
	secThroughput
	secChecker
	secRace
	secMemory
	secGlideClose
)

// withRatio fills Ratio as Value / ReferenceValue when both are known.
func (r Row) withRatio() Row {
	if r.Value != nil && r.ReferenceValue != nil && *r.ReferenceValue != 0 {
		r.Ratio = num(*r.Value / *r.ReferenceValue)
	}
	return r
}

func num(f float64) *float64 {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return nil
	}
	v := round(f)
	return &v
}

// round keeps four significant digits: the machine is shared, more would
// be noise.
func round(f float64) float64 {
	if f == 0 {
		return 0
	}
	v, _ := strconv.ParseFloat(strconv.FormatFloat(f, 'g', 4, 64), 64)
	return v
}

func orderRows(rows []Row) []Row {
	out := slices.Clone(rows)
	sort.SliceStable(out, func(i, j int) bool { return out[i].section < out[j].section })
	return out
}

// median of the values; NaN for none.
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// percentile by nearest rank: the smallest value with at least p of the
// values at or below it. +Inf values (censored runs) sort last.
func percentile(xs []float64, p float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	k := int(math.Ceil(p*float64(len(s)))) - 1
	return s[max(0, min(k, len(s)-1))]
}

func fmtPtr(p *float64) string {
	if p == nil {
		return "-"
	}
	return strconv.FormatFloat(*p, 'f', -1, 64)
}

// fmtValues lists the single runs for the note.
func fmtValues(xs []float64, unit string) string {
	var parts []string
	for _, x := range xs {
		if math.IsInf(x, 1) {
			parts = append(parts, "none")
			continue
		}
		parts = append(parts, strconv.FormatFloat(round(x), 'f', -1, 64))
	}
	return fmt.Sprintf("runs: %s %s", strings.Join(parts, ", "), unit)
}

func writeJSON(path string, rows []Row) error {
	if rows == nil {
		rows = []Row{}
	}
	var buf strings.Builder
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(rows); err != nil {
		return fmt.Errorf("encode results: %w", err)
	}
	if err := os.WriteFile(path, []byte(buf.String()), 0o644); err != nil {
		return fmt.Errorf("write results: %w", err)
	}
	return nil
}

func writeMarkdown(path string, rows []Row, m machine, cfg config) error {
	var b strings.Builder
	fmt.Fprintf(&b, "# lockcheck benchmarks\n\n")
	fmt.Fprintf(&b, "Written by `make bench` (`go run ./bench`). Each figure is the median of the runs given, next to a reference measured in the same run; ratio = value / reference. A table, not a test: nothing passes or fails.\n\n")
	if cfg.quick {
		fmt.Fprintf(&b, "**Quick run (-quick): 1 repetition, short durations, checker sizes divided by 10. Not the full measurement.**\n\n")
	}
	if m.Note != "" {
		fmt.Fprintf(&b, "**%s**\n\n", m.Note)
	}
	fmt.Fprintf(&b, "| measurement | value | unit | reference | reference value | ratio | runs | note |\n")
	fmt.Fprintf(&b, "|---|---:|---|---|---:|---:|---:|---|\n")
	for _, r := range rows {
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %d | %s |\n", cell(r.Name), fmtPtr(r.Value), cell(r.Unit), cell(r.Reference),
			fmtPtr(r.ReferenceValue), fmtPtr(r.Ratio), r.Runs, cell(r.Note))
	}
	fmt.Fprintf(&b, "\n## Machine\n\n")
	fmt.Fprintf(&b, "- date: %s (wall time of the run: %s)\n", m.Date, m.Wall)
	fmt.Fprintf(&b, "- CPU: %s, nproc %d, GOMAXPROCS %d\n", m.CPU, m.NProc, m.GoMaxProcs)
	fmt.Fprintf(&b, "- memory: %s\n", m.Memory)
	fmt.Fprintf(&b, "- load average at start: %s; at end: %s (other work shares this machine: figures may vary by 2x between runs)\n", m.LoadStart, m.LoadEnd)
	fmt.Fprintf(&b, "- Docker engine: %s\n", m.Docker)
	fmt.Fprintf(&b, "- Go: %s\n", m.Go)
	fmt.Fprintf(&b, "- server: %s\n", m.Server)
	fmt.Fprintf(&b, "\n## How to run\n\n")
	fmt.Fprintf(&b, "```\nmake bench                       # the full run, about 25 minutes\ngo run ./bench -quick            # 1 repetition, short durations, to try it\ngo run ./bench -only checker     # one section: startup, failover, throughput, checker, recheck, race, memory, glide-close\ngo run ./bench -h                # every flag\n```\n\n")
	fmt.Fprintf(&b, "This run's flags: %s\n", cfg.describe())
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		return fmt.Errorf("write results: %w", err)
	}
	return nil
}

func cell(s string) string { return strings.ReplaceAll(s, "|", "\\|") }

func (c config) describe() string {
	return fmt.Sprintf("`-runs %d -seeds %d -clients %d -throughput-duration %s -benchmark-requests %d -memory-duration %s -checker-keys %d -porcupine-timeout %s -porcupine-mem-mb %d -race-duration %s -glide-clients %d -glide-ways %s%s%s%s`",
		c.runs, c.seeds, c.clients, c.tpDuration, c.benchN, c.memDuration, c.checkerKeys, c.porcTimeout, c.porcMemMB, c.raceDuration,
		c.glideClients, c.glideWays, map[bool]string{true: " -glide-direct"}[c.glideDirect], map[bool]string{true: " -quick"}[c.quick], onlyFlag(c.only))
}

func onlyFlag(s string) string {
	if s == "" {
		return ""
	}
	return " -only " + s
}
