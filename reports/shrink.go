package reports

import (
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"time"
)

// Size is how big a run is to a reader of a bug report.
type Size struct {
	Clients    int     `json:"clients"`
	Keys       int     `json:"keys"`
	Ops        int     `json:"ops"`
	FaultSteps int     `json:"fault_steps"`
	Seconds    float64 `json:"seconds"`
}

// SizeOf measures a run from its result.json.
func SizeOf(r RunResult) Size {
	return Size{Clients: r.Clients, Keys: r.Keys, Ops: r.Ops, FaultSteps: len(r.Injected), Seconds: float64(r.DurationMs) / 1000}
}

func (z Size) String() string {
	return fmt.Sprintf("%d clients, %d keys, %d operations, %d fault steps, %.1f s", z.Clients, z.Keys, z.Ops, z.FaultSteps, z.Seconds)
}

// ShrinkStep is one cut tried: kept when every one of its runs showed the
// kind.
type ShrinkStep struct {
	What       string  `json:"what"`
	Kept       bool    `json:"kept"`
	Reproduced int     `json:"reproduced"`
	Runs       int     `json:"runs"`
	Size       *Size   `json:"size,omitempty"`
	Seconds    float64 `json:"seconds"`
	// Error says why a run of the cut could not be carried out.
	Error string `json:"error,omitempty"`
}

// Shrunk is shrink.json: what was kept, how much smaller it is, and how
// often it reproduces.
type Shrunk struct {
	From   string `json:"from"`
	Kind   string `json:"kind"`
	Before Size   `json:"before"`
	After  Size   `json:"after"`
	// Reproduced of Runs: the confirmation replays of the reproducer
	// that showed the kind; Confirmed when at least Need did.
	Reproduced int  `json:"reproduced"`
	Runs       int  `json:"runs"`
	Confirmed  bool `json:"confirmed"`
	// Command runs the reproducer; lockcheck replay OUT does too.
	Command string `json:"command"`
	// Script, when the reproducer is a trace (trace.json: only the steps
	// the violation needs, played one after the other), is its steps in
	// words; empty when it is a scenario (scenario.json).
	Script []string `json:"script,omitempty"`
	// Ended says why the search stopped: no cut left showed the kind, the
	// budget, or an interrupt.
	Ended string `json:"ended"`
	// Started and Machine say when and where the shrink ran: its times
	// are the machine's.
	Started time.Time    `json:"started,omitzero"`
	Machine string       `json:"machine,omitempty"`
	Budget  string       `json:"budget"`
	Seconds float64      `json:"seconds"`
	Steps   []ShrinkStep `json:"steps"`
}

// Ratio is how many times fewer operations the reproducer has.
func (s Shrunk) Ratio() float64 {
	if s.After.Ops == 0 {
		return 0
	}
	return float64(s.Before.Ops) / float64(s.After.Ops)
}

// ShrinkFileName is the shrink's summary in its folder.
const ShrinkFileName = "shrink.json"

// ShrinkMarkdown is a table of shrinks, one row each: the run it came
// from, the kind kept, before and after, how much smaller, and how often
// the reproducer showed it.
func ShrinkMarkdown(rows []Shrunk) string {
	var b strings.Builder
	b.WriteString("| run | kind | before: clients, keys, ops, fault steps, s | after | form | fewer ops | reproduced | took | ended |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|\n")
	for _, r := range rows {
		after, ratio, form := "none kept", "-", "-"
		if r.Command != "" {
			after, ratio, form = r.After.short(), fmt.Sprintf("%.1fx", r.Ratio()), "scenario"
		}
		if len(r.Script) > 0 {
			form = fmt.Sprintf("script of %d steps", len(r.Script))
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %d of %d | %.0f s of %s | %s |\n",
			filepath.Base(r.From), r.Kind, r.Before.short(), after, form, ratio, r.Reproduced, r.Runs, r.Seconds, r.Budget, r.Ended)
	}
	return b.String()
}

// ShrinkBlock is the shrinks' table as a page's generated block (make
// shrink-figures writes it into the README and docs/reproducing.md):
// when and where the first shrink ran, then the table.
func ShrinkBlock(rows []Shrunk) Block {
	var b strings.Builder
	for _, r := range rows {
		if !r.Started.IsZero() {
			fmt.Fprintf(&b, "Measured %s UTC (%s), %d shrinks.\n\n", r.Started.UTC().Format("2006-01-02 15:04"), r.Machine, len(rows))
			break
		}
	}
	b.WriteString(ShrinkMarkdown(rows))
	b.WriteString("\n") // no renderer reads the end marker as a row
	return Block{Name: "make shrink-figures", Text: b.String()}
}

// ShrinkHeadline is the shrinks' figures in one line, the README's block
// "make shrink-figures headline": how small the scripts came out, how
// much smaller than the runs, and how often they reproduced.
func ShrinkHeadline(rows []Shrunk) Block {
	if len(rows) == 0 {
		return Block{Name: "make shrink-figures headline", Text: "No shrink measured yet: make shrink-figures.\n"}
	}
	lo, hi := rows[0].After.Ops, rows[0].After.Ops
	minR, maxR := math.Inf(1), 0.0
	repLo, repHi := rows[0].Reproduced, rows[0].Reproduced
	for _, r := range rows {
		lo, hi = min(lo, r.After.Ops), max(hi, r.After.Ops)
		repLo, repHi = min(repLo, r.Reproduced), max(repHi, r.Reproduced)
		if r.After.Ops > 0 {
			x := float64(r.Before.Ops) / float64(r.After.Ops)
			minR, maxR = math.Min(minR, x), math.Max(maxR, x)
		}
	}
	when := ""
	if !rows[0].Started.IsZero() {
		when = fmt.Sprintf(" (measured %s UTC)", rows[0].Started.UTC().Format("2006-01-02 15:04"))
	}
	text := fmt.Sprintf("%d violated runs shrunk%s to scripts of %d-%d operations, %.1f-%.1fx fewer, each reproducing in %d-%d of %d replays.\n",
		len(rows), when, lo, hi, minR, maxR, repLo, repHi, rows[0].Runs)
	return Block{Name: "make shrink-figures headline", Text: text}
}

func (z Size) short() string {
	return fmt.Sprintf("%d, %d, %d, %d, %.1f", z.Clients, z.Keys, z.Ops, z.FaultSteps, z.Seconds)
}
