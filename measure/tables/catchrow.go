package tables

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/lockcheck/lockcheck/reports"
	"github.com/lockcheck/lockcheck/scenarios"
)

// Tally sums one mutant's runs and its control's into a row. A mutant run
// catches the mutant when the case's check failed; a control run is a false
// alarm when that same check failed. Every other failing check is counted
// beside, not as a catch or an alarm.
func Tally(mc scenarios.MutantCase, runs []reports.CatchRun) reports.CatchRow {
	row := reports.CatchRow{Mutant: mc.Client, Breaks: mc.Breaks, Why: mc.Why, Control: mc.Control, Scenario: mc.Summary(),
		CaughtBy: map[string]int{}, ControlFailing: map[string]int{}, Details: runs}
	for _, r := range runs {
		hit := slices.Contains(r.Failing, mc.Breaks)
		switch {
		case r.Error != "":
			row.Errors++
		case r.Control:
			row.ControlRuns++
			if hit {
				row.FalseAlarms++
			}
			for _, f := range r.Failing {
				if f != mc.Breaks {
					row.ControlFailing[f]++
				}
			}
		default:
			row.MutantRuns++
			if hit {
				row.Caught++
			} else if slices.Contains(r.Unknown, mc.Breaks) {
				row.Undecided++
			}
			for _, f := range r.Failing {
				row.CaughtBy[f]++
			}
		}
	}
	return row
}

// runLine is one run's progress line.
func runLine(mc scenarios.MutantCase, r reports.CatchRun) string {
	who := r.Client
	if r.Control {
		who += " (control of " + mc.Client + ")"
	}
	var what string
	switch {
	case r.Error != "":
		what = "error: " + r.Error
	case r.Control && r.Hit:
		what = fmt.Sprintf("FALSE ALARM of %s (%d findings)", mc.Breaks, r.Findings)
	case r.Control:
		what = "no false alarm of " + mc.Breaks
	case r.Hit:
		what = fmt.Sprintf("caught by %s (%d findings)", mc.Breaks, r.Findings)
	default:
		what = "NOT caught by " + mc.Breaks
	}
	failing := "none"
	if len(r.Failing) > 0 {
		failing = strings.Join(r.Failing, ", ")
	}
	line := fmt.Sprintf("%s seed %d: %s; failing: %s", who, r.Seed, what, failing)
	if len(r.Unknown) > 0 {
		line += "; undecided: " + strings.Join(r.Unknown, ", ")
	}
	return line + fmt.Sprintf("; %d ops, %s", r.Ops, (time.Duration(r.Elapsed)*time.Millisecond).Round(100*time.Millisecond))
}
