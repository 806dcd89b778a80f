package checker

import (
	"fmt"
	"strings"
	"time"

	"github.com/lockcheck/lockcheck/history"
)

// ClassNotReproduced: no check failed, but the run's faults did not get
// to show what they were for: a fault could not make its moment (a lock
// on the primary alone, a second holder within the first one's lease:
// history.Fault.Unmet), or the run ended before a lease had passed since
// its last fault step ended. A clean history then proves nothing about
// the fault, so the verdict is unknown, never safe.
const ClassNotReproduced Class = "not-reproduced"

// notReproduced says why a run's faults did not get to show anything, or
// nothing when they did: each fault window's unmet moment, and an
// aftermath cut short, or no step at all of the faults the run named.
// end is the run's last instant, ttl its lease (0: judge only the faults'
// own word).
func notReproduced(named []string, faults []history.Fault, end int64, ttl time.Duration) []string {
	if ttl > 0 && len(named) > 0 && len(faults) == 0 {
		return []string{fmt.Sprintf("no step of %s ran: the run ended before its fault schedule's first step (give it a longer duration)", strings.Join(named, ", "))}
	}
	var why []string
	var last *history.Fault
	for i, f := range faults {
		if f.Unmet != "" {
			why = append(why, f.Name+": "+f.Unmet)
		}
		if last == nil || f.End == 0 || (last.End != 0 && f.End > last.End) {
			last = &faults[i]
		}
	}
	if last == nil || ttl <= 0 || len(why) > 0 {
		return why
	}
	switch {
	case last.End == 0 || last.End > end:
		why = append(why, fmt.Sprintf("the run ended while %s was still under way: its aftermath was cut short", last.Name))
	case end-last.End < ttl.Nanoseconds():
		from, what := last.End, "window closed"
		if last.PromotedAt > 0 {
			from, what = last.PromotedAt, "promotion"
		}
		why = append(why, fmt.Sprintf("the run ended %s after %s's %s (a lease is %s): the race had no time to show",
			seconds(end-from), last.Name, what, ttl))
	}
	return why
}

// judgeFaults turns a safe run whose faults did not get to show anything
// into an unknown one that says why. A run with a finding (violated, or a
// fenced client's double holder) showed its fault's effect, whatever came
// of the rest.
func (r *Result) judgeFaults(h *history.History, end int64) {
	if r.Class != ClassSafe {
		return
	}
	ttl := time.Duration(h.Meta.TTLms) * time.Millisecond
	if len(h.Scenario) == 0 {
		// Not a run of lockcheck's (a script, an imported history): its
		// end is not a run's, and only a fault's own word counts.
		ttl = 0
	}
	why := notReproduced(h.Meta.Faults, h.Faults, max(end, h.Meta.DurationNs), ttl)
	if len(why) == 0 {
		return
	}
	r.NotReproduced = why
	r.Verdict, r.Class, r.ExitCode = Undecided, ClassNotReproduced, Undecided.ExitCode()
	r.Summary = "not reproduced: " + strings.Join(why, "; ")
}

// seconds writes a span of the run's clock as seconds, one decimal.
func seconds(ns int64) string { return fmt.Sprintf("%.1f s", float64(ns)/1e9) }
