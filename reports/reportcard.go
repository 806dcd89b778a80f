package reports

import (
	"fmt"
	"io"
	"slices"
	"strings"
)

// reportCardTables are the report card: per topology, a row per library
// and fault with how often it met lock-correct, its double holders, how
// long its holders went on after losing the lock, and the errors it
// surfaced.
func reportCardTables(w io.Writer, c *Claims) {
	claimsHeading(w, c, "default workload, 5 s lease, one fault step, ")
	var topologies []string
	for _, r := range c.Rows {
		if !slices.Contains(topologies, r.Topology) {
			topologies = append(topologies, r.Topology)
		}
	}
	for _, topo := range topologies {
		fmt.Fprintf(w, "**%s**\n\n", topo)
		fmt.Fprintln(w, "| library | fault | lock-correct | double holders | time to notice (median / worst) | errors surfaced | worst run |")
		fmt.Fprintln(w, "|---|---|---|---|---|---|---|")
		for _, r := range cardRows(c.Rows, topo) {
			fault := strings.TrimSuffix(strings.TrimPrefix(r.Claim, topo+"/"), "/fenced")
			met := fmt.Sprintf("%d/%d", r.GateMet, r.Runs)
			switch {
			case r.Expect == "measured":
				met += " *measured*"
			case !r.AsExpected():
				met = "**" + met + "**"
			}
			if r.NotReproduced > 0 {
				met += fmt.Sprintf(" (%d not reproduced)", r.NotReproduced)
			}
			if r.Errors > 0 {
				met += fmt.Sprintf(" (%d not made)", r.Errors)
			}
			worst := "-"
			if r.Card.WorstRun != "" {
				worst = fmt.Sprintf("[history](%s)", r.Card.WorstRun)
			}
			if short := shortRuns(r); short != "" {
				worst += "; short: " + short
			}
			fmt.Fprintf(w, "| %s | %s | %s | %d | %s | %s | %s |\n", ClientLabel(r.Client), fault, met, r.DoubleHolder, r.Card.notice(), r.Card.errors(), worst)
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintln(w, "How each client tells its holder that the lock is gone:")
	fmt.Fprintln(w)
	var told []string
	for _, r := range c.Rows {
		if r.Notice != "" && !slices.Contains(told, r.Client) {
			told = append(told, r.Client)
			fmt.Fprintf(w, "- %s: %s.\n", ClientLabel(r.Client), r.Notice)
		}
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "lock-correct: the runs that met the default gate, of those made (**bold**: short of every run; *measured*: a fault that hands the lock to two clients by design, not judged for an unfenced lock). Time to notice: from the loss of a lock its holder did not give up (its lease's end, or another's acquire) to the first reply that told the holder (a nil extend, a 0 release, an error), the median of the runs' medians and the worst; never told: losses the holder learned nothing of. Worst run: the history of the run with the longest time to notice, when it was kept, and of a short cell the runs that missed lock-correct.")
}

// shortRuns names a judged row's runs that missed lock-correct, linked
// to their histories where kept: the runs a reader of a short cell looks
// for first, which need not be the one with the longest time to notice.
func shortRuns(r ClaimRow) string {
	if r.Expect == "measured" || r.AsExpected() {
		return ""
	}
	var links []string
	for _, run := range r.Details {
		switch {
		case run.GateMet:
		case run.History != "":
			links = append(links, fmt.Sprintf("[seed %d](%s)", run.Seed, run.History))
		default:
			links = append(links, fmt.Sprintf("seed %d", run.Seed))
		}
	}
	return strings.Join(links, ", ")
}

// cardRows are a topology's rows, by library in the order they first
// appear, then by fault in plan order.
func cardRows(rows []ClaimRow, topo string) []ClaimRow {
	var clients []string
	var out []ClaimRow
	for _, r := range rows {
		if r.Topology == topo && !slices.Contains(clients, r.Client) {
			clients = append(clients, r.Client)
		}
	}
	for _, client := range clients {
		for _, r := range rows {
			if r.Topology == topo && r.Client == client {
				out = append(out, r)
			}
		}
	}
	return out
}

// ClientLabel is a client's name as a table shows it: the shipped
// redis-py adapter by its library and mode rather than its command line.
func ClientLabel(client string) string {
	if !strings.Contains(client, "redis_py_adapter") {
		return client
	}
	mode := "native"
	if _, m, ok := strings.Cut(client, "--mode "); ok {
		mode, _, _ = strings.Cut(m, " ")
	}
	if mode == "lock" {
		return "redis-py Lock"
	}
	return "redis-py (" + mode + ")"
}

// reportCardHeadline is the card in a sentence per library, for the
// README: the faults under which it met lock-correct in every run, those
// it did not, and how soon its holders were told of a loss.
func reportCardHeadline(c *Claims, when string) string {
	var clients []string
	for _, r := range c.Rows {
		if !slices.Contains(clients, r.Client) {
			clients = append(clients, r.Client)
		}
	}
	var out []string
	for _, client := range clients {
		var kept, short []string
		var tally CardTally
		for _, r := range c.Rows {
			if r.Client != client {
				continue
			}
			tally.Losses, tally.NeverTold = tally.Losses+r.Card.Losses, tally.NeverTold+r.Card.NeverTold
			tally.Medians = append(tally.Medians, r.Card.Medians...)
			tally.Worst = max(tally.Worst, r.Card.Worst)
			name := strings.TrimSuffix(r.Claim, "/fenced")
			switch {
			case r.Expect == "measured":
			case r.AsExpected():
				kept = append(kept, name)
			default:
				short = append(short, fmt.Sprintf("%s %d/%d", name, r.GateMet, r.Runs))
			}
		}
		line := fmt.Sprintf("- %s: lock-correct in every run in %d of %d judged cells", ClientLabel(client), len(kept), len(kept)+len(short))
		if len(short) > 0 {
			line += " (short: " + strings.Join(short, ", ") + ")"
		}
		out = append(out, line+"; time to notice "+tally.notice()+".")
	}
	return fmt.Sprintf("The report card (%s):\n\n%s", when, strings.Join(out, "\n"))
}
