package tables

import (
	"math"
	"regexp"
	"strings"

	"github.com/lockcheck/lockcheck/checker"
	"github.com/lockcheck/lockcheck/history"
	"github.com/lockcheck/lockcheck/reports"
)

// claimFigures takes a checked run's figures: its verdict, whether it met
// the default gate, its double holders, lost increments, late grants and
// stale writes stopped, how soon the first double holder came, and what
// its acquires cost.
func claimFigures(r *reports.ClaimRun, h *history.History, result *checker.Result) {
	r.Verdict, r.Class = string(result.Verdict), string(result.Class)
	r.NotReproduced = result.Class == checker.ClassNotReproduced || unmet(h)
	// a run whose fault did not make its moment is no evidence for the gate
	r.GateMet = checker.DefaultExpectation.Meets(result, h.Meta.Fenced) == nil && !r.NotReproduced
	if ch, ok := result.Checks.Find(checker.DoubleHolder); ok {
		r.DoubleHolders = ch.Count
	}
	if ch, ok := result.Checks.Find(checker.Resource); ok && ch.Status == checker.Fail {
		r.LostIncrements = ch.Count
	}
	if ch, ok := result.Checks.Find(checker.TTL); ok {
		for _, f := range ch.Findings {
			if f.Kind == checker.KindLateGrant {
				r.LateGrants++
			}
		}
	}
	r.StaleStopped = rejectedWrites(h)
	r.FirstDouble, r.Overlap = firstDouble(h, result)
	r.Acquires, r.Refused, r.GivenBack = acquireCosts(h)
	r.Redirects = redirects(h)
	r.Failed, _ = Failing(result)
	cardFigures(&r.CardRun, h, result)
}

// cardFigures takes the report card's figures of a run: its time to
// notice, and the errors its client surfaced by kind.
func cardFigures(c *reports.CardRun, h *history.History, result *checker.Result) {
	if n := result.TimeToNotice; n != nil {
		c.Losses, c.NeverTold = n.Losses, n.NeverTold
		c.NoticeMedian, c.NoticeWorst = reports.Millis(math.Round(n.MedianMs)), reports.Millis(math.Round(n.WorstMs))
	}
	for i := range h.Ops {
		op := &h.Ops[i]
		switch {
		case op.Kind == history.Write || op.Error == "":
		case op.Outcome == history.Unknown:
			c.NoReply++
		case strings.HasPrefix(op.Error, "NOSCRIPT") || strings.Contains(op.Error, " NOSCRIPT"):
			c.NoScript++
		case strings.Contains(op.Error, "scripting engine"):
			c.NoLua++
		case strings.Contains(strings.ToLower(op.Error), "unknown command"):
			c.UnknownCommand++
		default:
			c.OtherErrors++
		}
	}
}

// clusterRefusal matches a cluster's redirect or refusal as a word of an
// error, however a client wraps it: a client that follows ASK and MOVED,
// and retries TRYAGAIN and CLUSTERDOWN, surfaces none of them from a
// lock call.
var clusterRefusal = regexp.MustCompile(`(^|[^A-Za-z])(ASK|MOVED|TRYAGAIN|CROSSSLOT|CLUSTERDOWN)([^A-Za-z]|$)`)

// redirects counts the lock calls whose error was a cluster's redirect
// or refusal.
func redirects(h *history.History) int {
	n := 0
	for i := range h.Ops {
		if op := &h.Ops[i]; op.Kind != history.Write && op.Error != "" && clusterRefusal.MatchString(op.Error) {
			n++
		}
	}
	return n
}

// rejectedWrites counts the resource's rejections: the stale writes a
// fence stopped.
func rejectedWrites(h *history.History) int {
	n := 0
	for i := range h.Ops {
		if op := &h.Ops[i]; op.Kind == history.Write && op.Outcome == history.Fail {
			n++
		}
	}
	return n
}

// firstDouble is the time from the first fault's start to the first
// double holder that began after it, and how long that one lasted, in
// whole milliseconds rounded up (so a found one is never 0); 0 when
// either is missing.
func firstDouble(h *history.History, r *checker.Result) (to, overlap reports.Millis) {
	ch, ok := r.Checks.Find(checker.DoubleHolder)
	if !ok || len(h.Faults) == 0 {
		return 0, 0
	}
	from := h.Faults[0].Start
	var first *checker.Finding
	for i := range ch.Findings {
		if f := &ch.Findings[i]; f.Kind == checker.KindDoubleHolder && f.Start >= from && (first == nil || f.Start < first.Start) {
			first = f
		}
	}
	if first == nil {
		return 0, 0
	}
	return reports.Millis((first.Start - from + 1e6 - 1) / 1e6), reports.Millis(math.Ceil(first.OverlapMs))
}

// acquireCosts counts the acquires that took the lock, those an error
// reply refused (min-replicas-to-write's NOREPLICAS, and in every row the
// failover's own, READONLY and the like: the row without a mitigation
// shows how many of those a kill costs by itself), and those given back
// at once: a short WAIT's release, recorded as called at the instant the
// acquire returned (lockclient.Undo).
func acquireCosts(h *history.History) (took, refused, givenBack int) {
	lastAcquire := map[int]*history.Op{}
	for i := range h.Ops {
		op := &h.Ops[i]
		switch {
		case op.Kind == history.Acquire && op.Outcome == history.OK:
			took++
			lastAcquire[op.Worker] = op
		case op.Kind == history.Acquire && op.Outcome == history.Fail && op.Error != "":
			refused++
		case op.Kind == history.Release:
			if a := lastAcquire[op.Worker]; a != nil && a.Token == op.Token && a.Return == op.Call {
				givenBack++
			}
			delete(lastAcquire, op.Worker)
		}
	}
	return took, refused, givenBack
}

// unmet says whether a fault window of the run could not make its moment.
func unmet(h *history.History) bool {
	for _, f := range h.Faults {
		if f.Unmet != "" {
			return true
		}
	}
	return false
}
