package reports

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/lockcheck/lockcheck/measure"
)

// CatchRate is a catch-rate measurement: every mutant and its control run
// over the same seeds in the mutant's randomized scenario. It is a
// measurement, not a verdict: how often a random workload exposes a bug
// depends on the machine's timing, so the figures come with the machine's
// description and load.
type CatchRate struct {
	Server   string `json:"server"`
	Version  string `json:"version"`
	Topology string `json:"topology"`
	// Runs is the number of seeds asked for per mutant and per control
	// (seeds 1..Runs).
	Runs    int       `json:"runs"`
	Started time.Time `json:"started"`
	Elapsed Millis    `json:"elapsed_ms"`
	// Machine says what the figures were measured on: CPUs and the load
	// average at the start and the end.
	Machine string `json:"machine"`
	// Complete is false when the measurement was interrupted.
	Complete bool `json:"complete"`
	// Gate, when set, is the one scenario every mutant ran (the default
	// gate's, in a line): a mutant is caught when its run misses the
	// default expectation, and no control runs (the correct clients are
	// false-alarms' measurement).
	Gate string     `json:"gate,omitempty"`
	Rows []CatchRow `json:"rows"`
	// Part, in a shard's file (--shard I/N), says which part of the plan
	// it holds, for lockcheck merge; a whole measurement's file has none.
	measure.Part
}

// Millis is a duration written as whole milliseconds.
type Millis int64

// MillisOf converts a duration.
func MillisOf(d time.Duration) Millis { return Millis(d.Milliseconds()) }

func (m Millis) String() string {
	return (time.Duration(m) * time.Millisecond).Round(time.Second).String()
}

// CatchRow is one mutant's tally and its control's.
type CatchRow struct {
	Mutant string `json:"mutant"`
	// Breaks is the check the mutant's bug breaks: a mutant run catches it
	// when that check fails; a control run raises a false alarm when it
	// fails there.
	Breaks   string `json:"breaks"`
	Why      string `json:"why"`
	Control  string `json:"control"`
	Scenario string `json:"scenario"`
	// MutantRuns and ControlRuns count the runs that finished and were
	// checked; Errors the runs of either that did not (a row with errors
	// does not meet the goal).
	MutantRuns  int `json:"mutant_runs"`
	ControlRuns int `json:"control_runs"`
	Errors      int `json:"errors"`
	// Caught counts the mutant runs where Breaks failed; Undecided those
	// where it could not decide (never a catch).
	Caught    int `json:"caught"`
	Undecided int `json:"undecided"`
	// CaughtBy counts, per failing check, the mutant runs it failed in
	// (Breaks and every other check).
	CaughtBy map[string]int `json:"caught_by"`
	// FalseAlarms counts the control runs where Breaks failed.
	FalseAlarms int `json:"false_alarms"`
	// ControlFailing counts, per other failing check, the control runs it
	// failed in: expected ones too (resource for an unfenced client whose
	// holders stall), reported rather than hidden.
	ControlFailing map[string]int `json:"control_failing"`
	Details        []CatchRun     `json:"runs"`
}

// CatchRun is one seeded run of a mutant or of its control.
type CatchRun struct {
	Client  string `json:"client"`
	Control bool   `json:"control"`
	Seed    int64  `json:"seed"`
	// Failing and Unknown name the checks that failed or could not decide.
	Failing []string `json:"failing,omitempty"`
	Unknown []string `json:"unknown,omitempty"`
	// Hit says the mutant's check failed: caught for a mutant, a false
	// alarm for a control; Findings is how many findings that check had
	// (the margin: one finding is a near miss).
	Hit      bool     `json:"hit"`
	Findings int      `json:"findings"`
	Ops      int      `json:"ops"`
	Elapsed  Millis   `json:"elapsed_ms"`
	Error    string   `json:"error,omitempty"`
	Notes    []string `json:"notes,omitempty"`
	// History is the saved history of a run worth a look (a mutant not
	// caught, a control's false alarm), relative to the output folder.
	History string `json:"history,omitempty"`
}

// GoalMet says whether the row meets the goal a randomized scenario is
// held to: the mutant caught by its check in at least 19 runs of 20
// (95 %), its control never failing that check, and every run done.
func (r CatchRow) GoalMet() bool {
	return r.MutantRuns > 0 && r.ControlRuns > 0 && r.Errors == 0 && r.Caught*20 >= 19*r.MutantRuns && r.FalseAlarms == 0
}

// GateGoalMet is GoalMet for the default gate, which runs no controls.
func (r CatchRow) GateGoalMet() bool {
	return r.MutantRuns > 0 && r.Errors == 0 && r.Caught*20 >= 19*r.MutantRuns
}

// WriteCatchRate writes catch-rate.md and catch-rate.json into dir.
func WriteCatchRate(dir string, cr *CatchRate) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("catch-rate folder: %w", err)
	}
	if err := WriteJSON(filepath.Join(dir, "catch-rate.json"), cr); err != nil {
		return err
	}
	var md strings.Builder
	CatchRateMarkdown(&md, cr)
	if err := os.WriteFile(filepath.Join(dir, "catch-rate.md"), []byte(md.String()), 0o644); err != nil {
		return fmt.Errorf("write catch-rate.md: %w", err)
	}
	return nil
}

// CatchRateMarkdown renders the measurement as a markdown table, one row
// per mutant, then each scenario in a line.
func CatchRateMarkdown(w io.Writer, cr *CatchRate) {
	state := "complete"
	if !cr.Complete {
		state = "interrupted: partial figures"
	}
	if cr.Gate != "" {
		gateMarkdown(w, cr, state)
		return
	}
	fmt.Fprintf(w, "Catch rates on %s (%s) %s, seeds 1..%d per mutant and per control, measured %s in %s (%s); %s.\n\n",
		cr.Server, cr.Version, cr.Topology, cr.Runs, cr.Started.UTC().Format("2006-01-02 15:04 UTC"), cr.Elapsed, cr.Machine, state)
	fmt.Fprintln(w, "| mutant | check it breaks | caught | caught by (check: runs) | control | control false alarms | control's other failing checks (check: runs) | goal |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|")
	for _, r := range cr.Rows {
		caught := r.caughtText()
		goal := "met"
		if !r.GoalMet() {
			goal = "**not met**"
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %d of %d | %s | %s |\n", r.Mutant, r.Breaks, caught, counts(r.CaughtBy, ""),
			r.Control, r.FalseAlarms, r.ControlRuns, counts(r.ControlFailing, r.Breaks), goal)
	}
	fmt.Fprintln(w, "\nGoal: every mutant caught by the check it breaks in at least 19 of 20 seeded runs, every control 0 false alarms of that check in 20.")
	fmt.Fprintln(w, "\nScenarios (`lockcheck catch-rate`, scenarios.MutantCases):")
	fmt.Fprintln(w)
	for _, r := range cr.Rows {
		fmt.Fprintf(w, "- %s (%s): %s. %s.\n", r.Mutant, r.Breaks, r.Why, r.Scenario)
	}
}

// caughtText is the row's "caught" cell: how many of the mutant's runs,
// with those undecided and those that did not run.
func (r CatchRow) caughtText() string {
	caught := fmt.Sprintf("%d of %d", r.Caught, r.MutantRuns)
	if r.Undecided > 0 {
		caught += fmt.Sprintf(" (%d undecided)", r.Undecided)
	}
	if r.Errors > 0 {
		caught += fmt.Sprintf(" (%d runs failed to run)", r.Errors)
	}
	return caught
}

// gateMarkdown renders a measurement of the default gate: one row per
// mutant, caught when its run missed the default expectation.
func gateMarkdown(w io.Writer, cr *CatchRate, state string) {
	fmt.Fprintf(w, "The default gate on %s (%s) %s, seeds 1..%d per mutant, measured %s in %s (%s); %s.\n\n",
		cr.Server, cr.Version, cr.Topology, cr.Runs, cr.Started.UTC().Format("2006-01-02 15:04 UTC"), cr.Elapsed, cr.Machine, state)
	fmt.Fprintf(w, "Every mutant ran the one scenario: %s.\n\n", cr.Gate)
	fmt.Fprintln(w, "| mutant | the bug | caught (gate missed) | failing checks (check: runs) | goal: 19 of 20 |")
	fmt.Fprintln(w, "|---|---|---|---|---|")
	for _, r := range cr.Rows {
		caught := r.caughtText()
		goal := "met"
		if !r.GateGoalMet() {
			goal = "**not met**"
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s |\n", r.Mutant, r.Why, caught, counts(r.CaughtBy, r.Breaks), goal)
	}
}

// counts renders "check: n" pairs, most frequent first, leaving out skip.
func counts(m map[string]int, skip string) string {
	type kv struct {
		k string
		n int
	}
	var list []kv
	for k, n := range m {
		if k != skip && n > 0 {
			list = append(list, kv{k, n})
		}
	}
	if len(list) == 0 {
		return "none"
	}
	sort.Slice(list, func(i, j int) bool {
		if list[i].n != list[j].n {
			return list[i].n > list[j].n
		}
		return list[i].k < list[j].k
	})
	parts := make([]string, len(list))
	for i, e := range list {
		parts[i] = fmt.Sprintf("%s: %d", e.k, e.n)
	}
	return strings.Join(parts, ", ")
}
