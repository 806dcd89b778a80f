package reports

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/lockcheck/lockcheck/checker"
)

// RateRow is one cell of a matrix run over many seeds (lockcheck matrix
// --repeat): how often it showed the outcome it is expected to show, how
// long after its fault's start the first double holder came, and how long
// its runs took. A measurement for the docs, not a test.
type RateRow struct {
	Server, Topology, Client, Fault string
	Expected                        CellOutcome
	Runs, AsExpected                int
	// ToDouble is each run's seconds from its first fault window's start
	// to its first double holder (runs without one are left out);
	// Lengths each run's length in seconds.
	ToDouble, Lengths []float64
	// Unexpected says, for each run that did not show what was expected,
	// its seed and what it showed instead.
	Unexpected []string
}

// MatrixRate tallies the cells of matrices that ran the same combinations
// with other seeds; dirs[i] is the folder of idxs[i], whose runs'
// result.json give the times.
func MatrixRate(idxs []*Index, dirs []string) []RateRow {
	var rows []RateRow
	find := func(c IndexCell) *RateRow {
		for i := range rows {
			r := &rows[i]
			if r.Server == c.Server && r.Topology == c.Topology && r.Client == c.Client && r.Fault == c.Fault {
				return r
			}
		}
		rows = append(rows, RateRow{Server: c.Server, Topology: c.Topology, Client: c.Client, Fault: c.Fault, Expected: c.Expected})
		return &rows[len(rows)-1]
	}
	for i, idx := range idxs {
		for _, c := range idx.Cells {
			if c.Verdict == "" {
				continue // no finished run: n/a, unavailable, not run
			}
			r := find(c)
			r.Runs++
			if as, _ := c.AsExpected(); as {
				r.AsExpected++
			} else {
				r.Unexpected = append(r.Unexpected, fmt.Sprintf("seed %d: %s", c.Seed, c.Text()))
			}
			rr, err := LoadRunResult(filepath.Join(dirs[i], c.Dir, "result.json"))
			if err != nil {
				continue
			}
			r.Lengths = append(r.Lengths, float64(rr.DurationMs)/1e3)
			if t, ok := toDouble(rr); ok {
				r.ToDouble = append(r.ToDouble, t)
			}
		}
	}
	return rows
}

// toDouble is the seconds from a run's first fault window's start to its
// first double holder.
func toDouble(rr RunResult) (float64, bool) {
	dh, _ := rr.Checks.Find(checker.DoubleHolder)
	if len(rr.Injected) == 0 || len(dh.Findings) == 0 {
		return 0, false
	}
	first := dh.Findings[0].Start
	for _, f := range dh.Findings {
		first = min(first, f.Start)
	}
	return float64(first-rr.Injected[0].Start) / 1e9, true
}

// RateMarkdown is the rows as a Markdown table, with the runs that were
// not as expected listed under it.
func RateMarkdown(rows []RateRow) string {
	var b strings.Builder
	b.WriteString("| topology | client | fault | expected | runs | as expected | median time from the fault's start to the double holder | median run length |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|\n")
	for _, r := range rows {
		exp := r.Expected.Label()
		if r.Expected == "" {
			exp = "-"
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %d | %d of %d | %s | %s |\n", r.Topology, r.Client, r.Fault, exp, r.Runs, r.AsExpected, r.Runs,
			medianSeconds(r.ToDouble), medianSeconds(r.Lengths))
	}
	for _, r := range rows {
		for _, u := range r.Unexpected {
			fmt.Fprintf(&b, "\n- not as expected: %s %s under %s, %s", r.Topology, r.Client, r.Fault, u)
		}
	}
	return b.String()
}

// RateBlocks are the table as the generated block "make matrix-rate" of
// a page (when and on what machine it was measured, then the table), and
// its headline alone as the block "make matrix-rate headline" (the
// README's). A page may hold either or both.
func RateBlocks(rows []RateRow, measured string) []Block {
	var b strings.Builder
	b.WriteString(measured)
	b.WriteString("\n\n")
	b.WriteString(RateMarkdown(rows))
	b.WriteString("\n\n") // no renderer reads the end marker as a row
	head := measured + " Per cell: [docs/matrix.md](docs/matrix.md#make-run).\n\n"
	return []Block{{Name: "make matrix-rate", Text: b.String()}, {Name: "make matrix-rate headline", Text: head}}
}

// RateHeadline is the table in one line: the README's summary.
func RateHeadline(rows []RateRow) string {
	as, runs, cells, all := 0, 0, 0, 0
	for _, r := range rows {
		as, runs = as+r.AsExpected, runs+r.Runs
		if r.Runs > 0 {
			all++
			if r.AsExpected*20 >= r.Runs*19 {
				cells++
			}
		}
	}
	return fmt.Sprintf("%d of %d runs as expected; %d of %d cells in at least 19 of 20 of their runs", as, runs, cells, all)
}

func medianSeconds(xs []float64) string {
	if len(xs) == 0 {
		return "-"
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	m := s[len(s)/2]
	if len(s)%2 == 0 {
		m = (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	return fmt.Sprintf("%.1f s", m)
}
