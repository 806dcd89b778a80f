package reports

import (
	"fmt"

	"github.com/lockcheck/lockcheck/checker"
	"io"
	"path/filepath"
	"strings"
	"text/tabwriter"
)

// WriteVerdict prints a run's checks as a table, its notes, and the verdict
// line with the report's path: what a terminal shows after a run.
func WriteVerdict(w io.Writer, rr RunResult, dir string) {
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "CHECK\tSTATUS\tCOUNT\tSUMMARY\n")
	for _, c := range rr.Checks {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\n", c.Name, c.Status, c.Count, c.Summary)
	}
	tw.Flush()
	for _, c := range rr.Checks {
		if c.Status == checker.Fail {
			for _, f := range c.Findings {
				if !f.Allowed && f.Explanation != "" {
					fmt.Fprintf(w, "why %s: %s\n", c.Name, f.Explanation)
					break
				}
			}
		}
	}
	for _, n := range rr.Notes {
		fmt.Fprintf(w, "note: %s\n", n)
	}
	if rr.Class == checker.ClassStale {
		fmt.Fprintf(w, "class: stale-writes: an unfenced holder wrote after its lease had ended (a stall or a pause) and no two workers believed they held at once; a correct unfenced lock cannot stop this, only a fence can\n")
	}
	if rr.TimeToNotice != nil {
		fmt.Fprintf(w, "time to notice: %s\n", rr.TimeToNotice)
	}
	for _, why := range rr.NotReproduced {
		fmt.Fprintf(w, "not reproduced: %s\n", why)
	}
	fmt.Fprintf(w, "verdict: %s (%d ops, seed %d); report: %s\n", strings.ToUpper(string(rr.Verdict)), rr.Ops, rr.Seed, filepath.Join(dir, "report.html"))
}
