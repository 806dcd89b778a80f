package reports

import (
	"fmt"
	"io"
	"slices"
	"strings"
)

// migrationsTable is the migrations table: a row per client, a column
// per fault that moves the lock key's slot (a claim's "/fenced" variant
// shares its fault's column), each cell the runs that met lock-correct
// and what else they showed.
func migrationsTable(w io.Writer, c *Claims) {
	claimsHeading(w, c, "cluster of 3 primaries with a replica each, default workload, 2 s lease, one fault step, ")
	var faults, clients []string
	cells := map[[2]string]ClaimRow{}
	for _, r := range c.Rows {
		col := strings.TrimSuffix(r.Claim, "/fenced")
		if !slices.Contains(faults, col) {
			faults = append(faults, col)
		}
		if !slices.Contains(clients, r.Client) {
			clients = append(clients, r.Client)
		}
		cells[[2]string{r.Client, col}] = r
	}
	fmt.Fprintf(w, "| client | %s |\n", strings.Join(faults, " | "))
	fmt.Fprintf(w, "|---|%s\n", strings.Repeat("---|", len(faults)))
	for _, client := range clients {
		line := []string{client}
		for _, f := range faults {
			r, ok := cells[[2]string{client, f}]
			if !ok {
				line = append(line, "-")
				continue
			}
			line = append(line, migrationCell(r))
		}
		fmt.Fprintf(w, "| %s |\n", strings.Join(line, " | "))
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Each cell: the runs that met lock-correct, of those made; then the runs with a double holder, the runs whose fault could not make its moment (not reproduced: never counted as met), the runs that could not be made, and the lock calls that surfaced a cluster redirect or refusal (ASK, MOVED, TRYAGAIN, CROSSSLOT, CLUSTERDOWN) as their error. **Bold**: not what the row expects, lock-correct in every run; migrate-and-failover's unfenced cells (marked *measured*) are not judged, since its SIGKILL may lose a lock not yet on the replica.")
}

// migrationCell is one client under one fault.
func migrationCell(r ClaimRow) string {
	text := fmt.Sprintf("%d/%d", r.GateMet, r.Runs)
	var notes []string
	add := func(n int, what string) {
		if n > 0 {
			notes = append(notes, fmt.Sprintf("%d %s", n, what))
		}
	}
	add(r.DoubleHolder, "double")
	add(r.NotReproduced, "not reproduced")
	add(r.Errors, "not made")
	add(r.Redirects, "redirects surfaced")
	if len(notes) > 0 {
		text += " (" + strings.Join(notes, ", ") + ")"
	}
	switch {
	case r.Expect == "measured":
		return text + " *measured*"
	case !r.AsExpected():
		return "**" + text + "**"
	}
	return text
}

// migrationsHeadline is the table in one line for the README: the cells
// as expected, and those that were not.
func migrationsHeadline(c *Claims, when string) string {
	judged, as := 0, 0
	var not []string
	for _, r := range c.Rows {
		if r.Expect == "measured" {
			continue
		}
		judged++
		if r.AsExpected() {
			as++
		} else {
			not = append(not, fmt.Sprintf("%s under %s %d/%d", r.Client, r.Claim, r.GateMet, r.Runs))
		}
	}
	line := fmt.Sprintf("Locks while a slot moves (%s): %d of %d client and fault cells met lock-correct in every run", when, as, judged)
	if len(not) > 0 {
		line += "; not: " + strings.Join(not, ", ")
	}
	return line + "."
}
