package reports

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// Claims is the claims table's measurement: each claim's scenario run by
// each of its clients over seeds 1..Runs, and each Redlock mutant under
// the default gate, with the machine it ran on.
type Claims struct {
	Server   string     `json:"server"`
	Version  string     `json:"version"`
	Runs     int        `json:"runs"`
	Started  time.Time  `json:"started"`
	Elapsed  Millis     `json:"elapsed_ms"`
	Machine  string     `json:"machine"`
	Complete bool       `json:"complete"`
	Rows     []ClaimRow `json:"rows"`
	Mutants  []ClaimRow `json:"mutants"`
}

// ClaimRow is one claim (or mutant) run by one client.
type ClaimRow struct {
	Claim  string `json:"claim"`
	Says   string `json:"says"`
	Expect string `json:"expect"`
	Client string `json:"client"`
	// Command runs one seed of the row (add --seed N).
	Command string `json:"command"`
	// Runs counts the runs made and checked; Errors those that were not.
	Runs   int `json:"runs"`
	Errors int `json:"errors"`
	// Safe counts the runs with every check passed; GateMet those that
	// met the default gate (lock-correct).
	Safe    int `json:"safe"`
	GateMet int `json:"gate_met"`
	// DoubleHolder counts the runs with a double holder; StaleReached
	// those where a stale write reached an unfenced resource (lost
	// increments); StaleStopped those where the fenced resource rejected
	// one; LateGrant those where a grant came after its lease.
	DoubleHolder int `json:"double_holder"`
	StaleReached int `json:"stale_reached"`
	StaleStopped int `json:"stale_stopped"`
	LateGrant    int `json:"late_grant"`
	// FirstDoubleMs are, per run with a double holder, the time from its
	// fault's start to the first double holder.
	FirstDoubleMs []Millis   `json:"first_double_ms,omitempty"`
	Details       []ClaimRun `json:"runs_detail"`
}

// ClaimRun is one seeded run.
type ClaimRun struct {
	Claim          string `json:"claim"`
	Client         string `json:"client"`
	Seed           int64  `json:"seed"`
	Verdict        string `json:"verdict,omitempty"`
	Class          string `json:"class,omitempty"`
	GateMet        bool   `json:"gate_met"`
	DoubleHolders  int    `json:"double_holders"`
	LostIncrements int    `json:"lost_increments"`
	StaleStopped   int    `json:"stale_stopped"`
	LateGrants     int    `json:"late_grants"`
	// FirstDouble is the time from the first fault's start to the first
	// double holder (0: none, or no fault).
	FirstDouble Millis `json:"first_double_ms,omitempty"`
	Ops         int    `json:"ops"`
	Elapsed     Millis `json:"elapsed_ms"`
	Error       string `json:"error,omitempty"`
	// History is the saved history of a run with a double holder, a stale
	// write or an error.
	History string `json:"history,omitempty"`
}

// Add counts one run into the row.
func (r *ClaimRow) Add(run ClaimRun) {
	r.Details = append(r.Details, run)
	if run.Error != "" {
		r.Errors++
		return
	}
	r.Runs++
	count := func(n *int, hit bool) {
		if hit {
			*n++
		}
	}
	count(&r.Safe, run.Verdict == "safe")
	count(&r.GateMet, run.GateMet)
	count(&r.DoubleHolder, run.DoubleHolders > 0)
	count(&r.StaleReached, run.LostIncrements > 0)
	count(&r.StaleStopped, run.StaleStopped > 0)
	count(&r.LateGrant, run.LateGrants > 0)
	if run.FirstDouble > 0 {
		r.FirstDoubleMs = append(r.FirstDoubleMs, run.FirstDouble)
	}
}

// AsExpected says whether the row showed what its claim expects, by the
// names scenarios.Expected gives them.
func (r ClaimRow) AsExpected() bool {
	if r.Runs == 0 {
		return false
	}
	switch r.Expect {
	case "safe":
		return r.Safe == r.Runs
	case "lock-correct":
		return r.GateMet == r.Runs
	case "double holders":
		return r.DoubleHolder > 0
	case "stale writes reach the resource":
		return r.StaleReached > 0
	case "stale writes stopped by the fence":
		return r.StaleStopped > 0 && r.StaleReached == 0 && r.GateMet == r.Runs
	case "caught":
		return r.Runs-r.GateMet >= r.Runs*19/20
	}
	return false
}

// Line is the run's progress line.
func (r ClaimRun) Line() string {
	if r.Error != "" {
		return fmt.Sprintf("%s / %s seed %d: error: %s", r.Claim, r.Client, r.Seed, r.Error)
	}
	gate := "gate met"
	if !r.GateMet {
		gate = "gate NOT met"
	}
	return fmt.Sprintf("%s / %s seed %d: %s (%s), %s; double holders %d, lost increments %d, stale writes stopped %d, late grants %d; %d ops, %s",
		r.Claim, r.Client, r.Seed, r.Verdict, r.Class, gate, r.DoubleHolders, r.LostIncrements, r.StaleStopped, r.LateGrants, r.Ops, r.Elapsed)
}

// WriteClaims writes claims.json and claims.md into dir.
func WriteClaims(dir string, c *Claims) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("claims folder: %w", err)
	}
	if err := writeJSON(filepath.Join(dir, "claims.json"), c); err != nil {
		return err
	}
	var md strings.Builder
	ClaimsMarkdown(&md, c)
	if err := os.WriteFile(filepath.Join(dir, "claims.md"), []byte(md.String()), 0o644); err != nil {
		return fmt.Errorf("write claims.md: %w", err)
	}
	return nil
}

// ClaimsMarkdown renders the claims table, the mutants' table and the
// commands.
func ClaimsMarkdown(w io.Writer, c *Claims) {
	state := "complete"
	if !c.Complete {
		state = "interrupted: partial figures"
	}
	fmt.Fprintf(w, "%s %s, seeds 1..%d per row, measured %s in %s (%s); %s.\n\n",
		c.Server, c.Version, c.Runs, c.Started.UTC().Format("2006-01-02 15:04 UTC"), c.Elapsed, c.Machine, state)
	fmt.Fprintln(w, "| claim | client | expected | runs | double holder | median time to it | stale write reached the resource | stale write stopped by the fence | safe | lock-correct | as expected |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|---|---|---|")
	for _, r := range c.Rows {
		fmt.Fprintf(w, "| %s | %s | %s | %s | %d | %s | %d | %d | %d | %d | %s |\n",
			r.Claim, r.Client, r.Expect, runsCell(r), r.DoubleHolder, medianMillis(r.FirstDoubleMs), r.StaleReached, r.StaleStopped, r.Safe, r.GateMet, yesNo(r.AsExpected()))
	}
	if len(c.Mutants) > 0 {
		fmt.Fprintln(w, "\nRedlock's known mistakes, each judged by the default gate (lock-correct) in the default workload:")
		fmt.Fprintln(w, "\n| mutant | runs | caught (gate not met) | double holder | late grant | stale write reached the resource |")
		fmt.Fprintln(w, "|---|---|---|---|---|---|")
		for _, r := range c.Mutants {
			fmt.Fprintf(w, "| %s | %s | %d | %d | %d | %d |\n", r.Client, runsCell(r), r.Runs-r.GateMet, r.DoubleHolder, r.LateGrant, r.StaleReached)
		}
	}
	fmt.Fprintln(w, "\nWhat each claim says, and the command that runs one seed of it (add --seed N):")
	fmt.Fprintln(w)
	seen := map[string]bool{}
	for _, r := range append(append([]ClaimRow{}, c.Rows...), c.Mutants...) {
		if seen[r.Claim] {
			continue
		}
		seen[r.Claim] = true
		fmt.Fprintf(w, "- **%s**: %s. `%s`\n", r.Claim, r.Says, r.Command)
	}
}

func runsCell(r ClaimRow) string {
	if r.Errors > 0 {
		return fmt.Sprintf("%d (%d failed to run)", r.Runs, r.Errors)
	}
	return fmt.Sprint(r.Runs)
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "**no**"
}

// medianMillis is the median of ms, "-" when empty.
func medianMillis(ms []Millis) string {
	if len(ms) == 0 {
		return "-"
	}
	s := slices.Clone(ms)
	slices.Sort(s)
	return fmt.Sprintf("%.1f s", float64(s[len(s)/2])/1000)
}
