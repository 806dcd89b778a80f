package reports

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/lockcheck/lockcheck/measure"
)

// FalseAlarms is a measurement of correct clients in the default workload:
// how many seeded runs failed a check that no correct client may fail
// there (Checks). Like CatchRate, it comes with the machine it ran on.
type FalseAlarms struct {
	Runs     int        `json:"runs"`
	Duration Millis     `json:"duration_ms"`
	Checks   []string   `json:"checks"`
	Started  time.Time  `json:"started"`
	Elapsed  Millis     `json:"elapsed_ms"`
	Machine  string     `json:"machine"`
	Complete bool       `json:"complete"`
	Rows     []AlarmRow `json:"rows"`
	// Part, in a shard's file (--shard I/N), says which part of the plan
	// it holds, for lockcheck merge; a whole measurement's file has none.
	measure.Part
}

// AlarmRow is one client on one build and topology.
type AlarmRow struct {
	Client   string `json:"client"`
	Server   string `json:"server"`
	Version  string `json:"version"`
	Topology string `json:"topology"`
	// Runs counts the runs made and checked; Errors those that were not.
	Runs   int `json:"runs"`
	Errors int `json:"errors"`
	// Alarms counts the runs that failed one of Checks.
	Alarms int `json:"alarms"`
	// Failing counts, per failing check, the runs it failed in: the
	// alarms and the expected ones (resource for an unfenced client).
	Failing map[string]int `json:"failing"`
	Details []AlarmRun     `json:"runs_detail"`
}

// AlarmRun is one seeded run.
type AlarmRun struct {
	Client   string   `json:"client"`
	Server   string   `json:"server"`
	Topology string   `json:"topology"`
	Seed     int64    `json:"seed"`
	Failing  []string `json:"failing,omitempty"`
	Unknown  []string `json:"unknown,omitempty"`
	// Alarms are the failing checks no correct client may fail.
	Alarms  []string `json:"alarms,omitempty"`
	Ops     int      `json:"ops"`
	Elapsed Millis   `json:"elapsed_ms"`
	Error   string   `json:"error,omitempty"`
	// History is the saved history of a run that raised an alarm.
	History string `json:"history,omitempty"`
}

// Add counts one run into the row.
func (r *AlarmRow) Add(run AlarmRun) {
	r.Details = append(r.Details, run)
	if run.Error != "" {
		r.Errors++
		return
	}
	r.Runs++
	if len(run.Alarms) > 0 {
		r.Alarms++
	}
	for _, f := range run.Failing {
		r.Failing[f]++
	}
}

// Line is the run's progress line.
func (r AlarmRun) Line() string {
	what := "no alarm"
	switch {
	case r.Error != "":
		what = "error: " + r.Error
	case len(r.Alarms) > 0:
		what = "FALSE ALARM: " + strings.Join(r.Alarms, ", ")
	}
	failing := "none"
	if len(r.Failing) > 0 {
		failing = strings.Join(r.Failing, ", ")
	}
	return fmt.Sprintf("%s on %s %s seed %d: %s; failing: %s; %d ops, %s", r.Client, r.Server, r.Topology, r.Seed, what, failing, r.Ops, r.Elapsed)
}

// SortAlarmRows orders rows by client, then topology.
func SortAlarmRows(rows []AlarmRow) {
	slices.SortStableFunc(rows, func(a, b AlarmRow) int {
		if c := strings.Compare(a.Client, b.Client); c != 0 {
			return c
		}
		return strings.Compare(a.Topology, b.Topology)
	})
}

// WriteFalseAlarms writes false-alarms.md and false-alarms.json into dir.
func WriteFalseAlarms(dir string, fa *FalseAlarms) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("false-alarms folder: %w", err)
	}
	if err := WriteJSON(filepath.Join(dir, "false-alarms.json"), fa); err != nil {
		return err
	}
	var md strings.Builder
	FalseAlarmsMarkdown(&md, fa)
	if err := os.WriteFile(filepath.Join(dir, "false-alarms.md"), []byte(md.String()), 0o644); err != nil {
		return fmt.Errorf("write false-alarms.md: %w", err)
	}
	return nil
}

// FalseAlarmsMarkdown renders the measurement as a table, a row per client
// and topology.
func FalseAlarmsMarkdown(w io.Writer, fa *FalseAlarms) {
	state := "complete"
	if !fa.Complete {
		state = "interrupted: partial figures"
	}
	fmt.Fprintf(w, "Correct clients in the default workload, seeds 1..%d of %s each, measured %s in %s (%s); %s.\n\n",
		fa.Runs, fa.Duration, fa.Started.UTC().Format("2006-01-02 15:04 UTC"), fa.Elapsed, fa.Machine, state)
	fmt.Fprintf(w, "| client | server | topology | runs | false alarms (%s) | other failing checks (check: runs) |\n", strings.Join(fa.Checks, " or "))
	fmt.Fprintln(w, "|---|---|---|---|---|---|")
	for _, r := range fa.Rows {
		runs := fmt.Sprint(r.Runs)
		if r.Errors > 0 {
			runs += fmt.Sprintf(" (%d failed to run)", r.Errors)
		}
		other := map[string]int{}
		for k, n := range r.Failing {
			if !slices.Contains(fa.Checks, k) {
				other[k] = n
			}
		}
		fmt.Fprintf(w, "| %s | %s (%s) | %s | %s | %d | %s |\n", r.Client, r.Server, r.Version, r.Topology, runs, r.Alarms, counts(other, ""))
	}
}
