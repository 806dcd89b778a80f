package reports

import (
	"fmt"
	"strings"

	"github.com/lockcheck/lockcheck/checker"
)

// CellOutcome is what one cell of the matrix shows.
type CellOutcome string

const (
	// CellSafe: every check passed.
	CellSafe CellOutcome = "safe"
	// CellFenced: a fenced client saw double holders (allowed) and the
	// resource's fence check passed: the fence stopped the stale holder.
	CellFenced CellOutcome = "fenced"
	// CellStale: an unfenced holder wrote after its lease ended, and no
	// two workers believed they held at once (checker.ClassStale): what a
	// correct unfenced lock shows when its holders stall.
	CellStale CellOutcome = "stale-writes"
	// CellViolated: at least one check failed.
	CellViolated CellOutcome = "violated"
	// CellNotReproduced: no check failed, but the fault could not make
	// its moment or the run ended before its aftermath (Reason says which).
	CellNotReproduced CellOutcome = "not reproduced"
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
var CellOutcomes = []CellOutcome{CellSafe, CellFenced, CellStale, CellViolated, CellNotReproduced, CellUnknown, CellUnavailable, CellNA, CellError, CellInterrupted, CellNotRun, CellOtherShard}

// Label is the outcome's text in a cell.
func (o CellOutcome) Label() string {
	switch o {
	case CellFenced:
		return "double holder stopped by fence"
	case CellStale:
		return "stale writes (unfenced)"
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
	case CellNotReproduced:
		return "notreproduced"
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
	// Reason says why a cell is unavailable, n/a, error, not run or not
	// reproduced.
	Reason string `json:"reason,omitempty"`
	// Expected, when set, is the outcome the cell's client and fault
	// should show (a race fault: VIOLATED unfenced, the fence's stop
	// fenced); AsExpected compares.
	Expected CellOutcome `json:"expected,omitempty"`
	// Dir is the run's folder and Link its report page, both relative to
	// the index.
	Dir  string `json:"dir,omitempty"`
	Link string `json:"link,omitempty"`
	Seed int64  `json:"seed,omitempty"`
	// Replay is the command that repeats this cell's run from its folder.
	Replay  string          `json:"replay,omitempty"`
	Verdict checker.Verdict `json:"verdict,omitempty"`
	// Class is the run's class (safe, fenced, violated, unknown).
	Class   checker.Class `json:"class,omitempty"`
	Summary string        `json:"summary,omitempty"`
	Ops     int           `json:"ops,omitempty"`
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
	c.Verdict, c.Class, c.Ops, c.Seed = rr.Verdict, rr.Class, rr.Ops, rr.Seed
	c.Checks = nil
	for _, chk := range rr.Checks {
		c.Checks = append(c.Checks, IndexCheck{Name: chk.Name, Status: chk.Status, Count: chk.Count})
	}
	c.Outcome, c.Failed = ClassifyRun(rr)
	fence, _ := rr.Checks.Find(checker.Fence)
	c.Fenced = fence.Status != "" && fence.Status != checker.Skipped
	c.Summary, c.Reason = verdictSummary(rr), ""
	if c.Outcome == CellNotReproduced {
		c.Reason = strings.Join(rr.NotReproduced, "; ")
	}
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
	case checker.ClassStale:
		return CellStale, nil
	case checker.ClassSafe:
		return CellSafe, nil
	case checker.ClassNotReproduced:
		return CellNotReproduced, nil
	}
	return CellUnknown, nil
}

// AsExpected says whether a cell with an expectation and a finished run
// shows it; ok is false when there is nothing to compare.
func (c IndexCell) AsExpected() (as, ok bool) {
	if c.Expected == "" || c.Result == nil && c.Verdict == "" {
		return false, false
	}
	return c.Outcome == c.Expected, true
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
	if c.Outcome == CellNotReproduced && c.Reason != "" {
		return c.Outcome.Label() + ": " + c.Reason
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
	if c.Expected != "" {
		parts = append(parts, "expected: "+c.Expected.Label())
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
