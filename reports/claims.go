package reports

import (
	"cmp"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/lockcheck/lockcheck/measure"
)

// Claims is the claims table's measurement: each claim's scenario run by
// each of its clients over seeds 1..Runs, and each Redlock mutant under
// the default gate, with the machine it ran on.
type Claims struct {
	// Table is which table: TableClaims or TableMitigations.
	Table    string     `json:"table"`
	Server   string     `json:"server"`
	Version  string     `json:"version"`
	Runs     int        `json:"runs"`
	Started  time.Time  `json:"started"`
	Elapsed  Millis     `json:"elapsed_ms"`
	Machine  string     `json:"machine"`
	Complete bool       `json:"complete"`
	Rows     []ClaimRow `json:"rows"`
	Mutants  []ClaimRow `json:"mutants"`
	// Part, in a shard's file (--shard I/N), says which part of the plan
	// it holds, for lockcheck merge; a whole measurement's file has none.
	measure.Part
}

// The tables a Claims measurement renders.
const (
	TableClaims      = "claims"
	TableMitigations = "mitigations"
	TableMigrations  = "migrations"
	TableReportCard  = "report-card"
)

// ClaimRow is one claim (or mutant) run by one client.
type ClaimRow struct {
	Claim    string `json:"claim"`
	Topology string `json:"topology"`
	Says     string `json:"says"`
	Expect   string `json:"expect"`
	Client   string `json:"client"`
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
	// fault's start to the first double holder, and OverlapMs how long
	// that first double holder lasted.
	FirstDoubleMs []Millis `json:"first_double_ms,omitempty"`
	OverlapMs     []Millis `json:"overlap_ms,omitempty"`
	// Acquires are the acquires that took the lock (given back or not),
	// Refused those an error reply refused (NOREPLICAS, and the
	// failover's READONLY and the like), GivenBack those given back at
	// once (a short WAIT), summed over the runs.
	Acquires  int `json:"acquires"`
	Refused   int `json:"refused"`
	GivenBack int `json:"given_back"`
	// Redirects are the lock calls, over the runs, whose error the
	// client surfaced was a cluster's redirect or refusal (ASK, MOVED,
	// TRYAGAIN, CROSSSLOT, CLUSTERDOWN): a client that follows them
	// surfaces none. NotReproduced counts the runs whose fault could not
	// make its moment (checker's not-reproduced).
	Redirects     int       `json:"redirects,omitempty"`
	NotReproduced int       `json:"not_reproduced,omitempty"`
	Card          CardTally `json:"card"`
	// Notice is how the client tells its holder of a loss (the card's
	// notes).
	Notice  string     `json:"notice,omitempty"`
	Details []ClaimRun `json:"runs_detail"`
}

// ClaimRun is one seeded run.
type ClaimRun struct {
	Claim string `json:"claim"`
	// Version is what the servers reported.
	Version        string `json:"version,omitempty"`
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
	// double holder (0: none, or no fault); Overlap how long that double
	// holder lasted.
	FirstDouble Millis `json:"first_double_ms,omitempty"`
	Overlap     Millis `json:"overlap_ms,omitempty"`
	// Acquires, Refused and GivenBack count the run's acquires as
	// ClaimRow does.
	Acquires  int `json:"acquires"`
	Refused   int `json:"refused"`
	GivenBack int `json:"given_back"`
	// Redirects counts the lock calls that surfaced a cluster redirect
	// or refusal as their error (ClaimRow.Redirects). NotReproduced says
	// the run's fault could not make its moment (a window's unmet, or
	// checker's not-reproduced): such a run never meets the gate.
	Redirects     int  `json:"redirects,omitempty"`
	NotReproduced bool `json:"not_reproduced,omitempty"`
	// Failed names the checks that failed.
	Failed []string `json:"failed,omitempty"`
	CardRun
	Ops     int    `json:"ops"`
	Elapsed Millis `json:"elapsed_ms"`
	Error   string `json:"error,omitempty"`
	// History is the saved history of a run with a double holder or a
	// stale write that reached the resource, of a correct client's run
	// that missed the gate, and of a mutant's run that met it (missed).
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
		r.OverlapMs = append(r.OverlapMs, run.Overlap)
	}
	r.Acquires += run.Acquires
	r.Refused += run.Refused
	r.GivenBack += run.GivenBack
	r.Redirects += run.Redirects
	count(&r.NotReproduced, run.NotReproduced)
	r.Card.add(run)
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
	case "measured":
		return true
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
	if len(r.Failed) > 0 {
		gate += ", failed " + strings.Join(r.Failed, " ")
	}
	return fmt.Sprintf("%s / %s seed %d: %s (%s), %s; double holders %d, lost increments %d, stale writes stopped %d, late grants %d; %d ops, %s",
		r.Claim, r.Client, r.Seed, r.Verdict, r.Class, gate, r.DoubleHolders, r.LostIncrements, r.StaleStopped, r.LateGrants, r.Ops, r.Elapsed)
}

// WriteClaims writes TABLE.json and TABLE.md into dir: claims,
// mitigations or migrations.
func WriteClaims(dir string, c *Claims) error {
	name := cmp.Or(c.Table, TableClaims)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("claims folder: %w", err)
	}
	if err := WriteJSON(filepath.Join(dir, name+".json"), c); err != nil {
		return err
	}
	var md strings.Builder
	ClaimsPage(&md, c)
	if err := os.WriteFile(filepath.Join(dir, name+".md"), []byte(md.String()), 0o644); err != nil {
		return fmt.Errorf("write %s.md: %w", name, err)
	}
	return nil
}

// ClaimsPage renders the measurement's page (claims.md or
// mitigations.md): its tables, then what each row says and the command
// that runs one seed of it; the same blocks the docs show (ClaimsBlocks).
func ClaimsPage(w io.Writer, c *Claims) {
	b := ClaimsBlocks(c)
	fmt.Fprint(w, b[0].Text, "\n", b[1].Text)
}

// ClaimsBlocks are the blocks of the hand-written pages that a measurement
// generates (see Splice): its tables, under the marker "make TABLE" (the
// make target that measures the table has the table's name), and what
// each row says with its command, under "make TABLE, rows". The two are
// apart because the README, which has a length to keep, shows the tables
// alone and links to docs/redlock.md, which shows both.
func ClaimsBlocks(c *Claims) []Block {
	var tables, rows strings.Builder
	switch c.Table {
	case TableMitigations:
		mitigationsTable(&tables, c)
		commands(&rows, c.Rows)
	case TableMigrations:
		migrationsTable(&tables, c)
		commands(&rows, c.Rows)
	case TableReportCard:
		reportCardTables(&tables, c)
		commands(&rows, c.Rows)
	default:
		claimsTables(&tables, c)
		commands(&rows, append(slices.Clone(c.Rows), c.Mutants...))
	}
	// a blank line before the end marker, so that no Markdown renderer
	// reads the marker as one more row of the table above it
	name := "make " + c.Table
	return []Block{{Name: name, Text: tables.String() + "\n"}, {Name: name + ", rows", Text: rows.String()},
		{Name: name + " headline", Text: claimsHeadline(c) + "\n"}}
}

// claimsHeadline is a table's figure in one line, for the README, which
// links to docs/redlock.md for the table.
func claimsHeadline(c *Claims) string {
	when := fmt.Sprintf("%s, %d seeds per row, measured %s UTC", c.Server, c.Runs, c.Started.UTC().Format("2006-01-02 15:04"))
	switch c.Table {
	case TableMigrations:
		return migrationsHeadline(c, when)
	case TableReportCard:
		return reportCardHeadline(c, when)
	}
	if c.Table == TableMitigations {
		var parts []string
		for _, r := range c.Rows {
			_, name, _ := strings.Cut(r.Claim, "/")
			parts = append(parts, fmt.Sprintf("%s %s %d", r.Topology, name, r.DoubleHolder))
		}
		return fmt.Sprintf("The failover race under each mitigation (%s): runs of %d with a double holder: %s.",
			when, c.Runs, strings.Join(parts, ", "))
	}
	as, caught := 0, 0
	var not []string
	for _, r := range c.Rows {
		if r.AsExpected() {
			as++
		} else {
			not = append(not, r.Claim+" ("+r.Client+")")
		}
	}
	for _, r := range c.Mutants {
		if r.Runs > 0 && r.Runs-r.GateMet >= r.Runs*19/20 {
			caught++
		}
	}
	line := fmt.Sprintf("The article's claims about Redlock (%s): %d of %d rows as expected", when, as, len(c.Rows))
	if len(not) > 0 {
		line += ", not " + strings.Join(not, ", ")
	}
	return line + fmt.Sprintf("; %d of %d Redlock mutants caught in at least 19 of 20 runs.", caught, len(c.Mutants))
}

// mitigationsTable renders the mitigations' table, after its heading
// line: per topology and mitigation, how often the failover race gave a
// double holder, how soon after the kill and for how long, whether a
// stale write reached the resource, and what the mitigation cost in
// acquires refused or given back.
func mitigationsTable(w io.Writer, c *Claims) {
	claimsHeading(w, c, "kill-primary, ")
	fmt.Fprintln(w, "| topology | mitigation | client | runs | with a double holder | median time from the fault's start to it | median overlap | stale write reached the resource | acquires refused with an error or given back |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|---|")
	for _, r := range c.Rows {
		_, name, _ := strings.Cut(r.Claim, "/")
		cost := "-"
		if total := r.Acquires + r.Refused; total > 0 {
			cost = fmt.Sprintf("%.1f %% (%d refused, %d given back, of %d)", 100*float64(r.Refused+r.GivenBack)/float64(total), r.Refused, r.GivenBack, total)
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s | %s | %d | %s |\n", r.Topology, name, r.Client, runsCell(r),
			share(r.DoubleHolder, r.Runs), medianMillis(r.FirstDoubleMs), medianMillis(r.OverlapMs), r.StaleReached, cost)
	}
}

// claimsHeading is a table's first line: the build, the seeds, when, how
// long, on what machine, and whether it is complete.
func claimsHeading(w io.Writer, c *Claims, what string) {
	state := "complete"
	if !c.Complete {
		state = "interrupted: partial figures"
	}
	fmt.Fprintf(w, "%s %s, %sseeds 1..%d per row, measured %s in %s (%s); %s.\n\n",
		c.Server, c.Version, what, c.Runs, c.Started.UTC().Format("2006-01-02 15:04 UTC"), c.Elapsed, c.Machine, state)
}

// claimsTables is the claims table with its heading line, then the
// mutants' table. The mutants' header says how they are judged, rather
// than a sentence before it: the README shows these tables and keeps to
// a length.
func claimsTables(w io.Writer, c *Claims) {
	claimsHeading(w, c, "")
	fmt.Fprintln(w, "| claim | client | expected | runs | double holder | median time to it | stale write reached the resource | stale write stopped by the fence | safe | lock-correct | as expected |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|---|---|---|")
	for _, r := range c.Rows {
		fmt.Fprintf(w, "| %s | %s | %s | %s | %d | %s | %d | %d | %d | %d | %s |\n",
			r.Claim, r.Client, r.Expect, runsCell(r), r.DoubleHolder, medianMillis(r.FirstDoubleMs), r.StaleReached, r.StaleStopped, r.Safe, r.GateMet, yesNo(r.AsExpected()))
	}
	if len(c.Mutants) > 0 {
		fmt.Fprintln(w, "\n| Redlock mutant, in the default workload | runs | caught (lock-correct not met) | double holder | late grant | stale write reached the resource |")
		fmt.Fprintln(w, "|---|---|---|---|---|---|")
		for _, r := range c.Mutants {
			fmt.Fprintf(w, "| %s | %s | %d | %d | %d | %d |\n", r.Client, runsCell(r), r.Runs-r.GateMet, r.DoubleHolder, r.LateGrant, r.StaleReached)
		}
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
