package reports

import (
	"fmt"
	"io"
	"slices"
)

// commands lists what each row says and the command that runs one seed
// of it, once per row name.
func commands(w io.Writer, rows []ClaimRow) {
	fmt.Fprintln(w, "What each row says, and the command that runs one seed of it (add --seed N):")
	fmt.Fprintln(w)
	seen := map[string]bool{}
	for _, r := range rows {
		if !seen[r.Claim] {
			seen[r.Claim] = true
			fmt.Fprintf(w, "- **%s**: %s. `%s`\n", r.Claim, r.Says, r.Command)
		}
	}
}

// share is n of runs as a fraction and a percentage.
func share(n, runs int) string {
	if runs == 0 {
		return "-"
	}
	return fmt.Sprintf("%d of %d (%.0f %%)", n, runs, 100*float64(n)/float64(runs))
}

// medianMillis is the median of ms, "-" when empty.
func medianMillis(ms []Millis) string {
	if len(ms) == 0 {
		return "-"
	}
	s := slices.Clone(ms)
	slices.Sort(s)
	m := s[len(s)/2]
	if m < 1000 {
		return fmt.Sprintf("%d ms", m)
	}
	return fmt.Sprintf("%.1f s", float64(m)/1000)
}
