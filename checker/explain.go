package checker

import (
	"fmt"
	"strings"

	"github.com/lockcheck/lockcheck/history"
)

// explainers say, for each finding kind, in a few sentences who did what,
// from which replies, which fault windows came between (their targets name
// the nodes), and which rule a correct lock would have kept. They read the
// finding (its holds and operations) and the run's fault windows only, so
// a finding is explained the same in every report, for a history of any
// size. Each check's row in checkTable names the explainers of its kinds.
var explainers = explainersOf(checkTable)

// explainer is one finding kind's explanation.
type explainer func(f *Finding, c explainCtx) string

// explainCtx is what an explanation reads besides its finding: the run's
// fault windows, and why its options allow double holders
// (Options.AllowedBecause).
type explainCtx struct {
	faults         []history.Fault
	allowedBecause string
}

// Explain is f in a few sentences (see explainers); faults are the run's
// fault windows, allowedBecause why its options allow double holders.
func Explain(f *Finding, faults []history.Fault, allowedBecause string) string {
	if e, ok := explainers[f.Kind]; ok {
		return e(f, explainCtx{faults: faults, allowedBecause: allowedBecause})
	}
	return f.Summary
}

// explainAll fills the explanation of every finding r lists.
func explainAll(r *Result, faults []history.Fault) {
	why := r.Options.AllowedBecause
	if why == "" {
		why = "the run's options allow double holders"
	}
	for i := range r.Checks {
		for j := range r.Checks[i].Findings {
			f := &r.Checks[i].Findings[j]
			f.Explanation = Explain(f, faults, why)
		}
	}
}

// at is an instant on the harness clock, in seconds from the run's start.
func at(ns int64) string { return fmt.Sprintf("%.2f s", float64(ns)/1e9) }

// did is one operation as its worker saw it: "worker 5's acquire got OK
// at 5.59 s".
func did(op *history.Op) string {
	reply := map[history.Outcome]string{history.OK: "got OK", history.Fail: "was refused", history.Unknown: "got no answer"}[op.Outcome]
	if op.Outcome == history.Fail && op.Error != "" {
		reply = fmt.Sprintf("got the error %q", op.Error)
	}
	return fmt.Sprintf("worker %d's %s %s at %s", op.Worker, op.Kind, reply, at(op.Return))
}

// between lists the fault windows that overlap [from, to], with their
// targets: "; between them: kill-primary on n0 (8.10-9.30 s)".
func between(faults []history.Fault, from, to int64) string {
	var parts []string
	for _, w := range faults {
		end := w.End
		if end == 0 {
			end = to // still open when the history ends
		}
		if w.Start > to || end < from {
			continue
		}
		target, promoted := "", ""
		if w.Target != "" {
			target = " on " + w.Target
		}
		if w.Promoted != "" {
			promoted = fmt.Sprintf("; %s serving as the primary from %s", w.Promoted, at(w.PromotedAt))
		}
		parts = append(parts, fmt.Sprintf("%s%s (%s-%s%s)", w.Name, target, at(w.Start), at(end), promoted))
	}
	if len(parts) == 0 {
		return ""
	}
	return "; between them: " + strings.Join(parts, ", ")
}

// tookOver says which node answered a reply at ret, when a fault window
// that began after from made another node the primary by then: ", from
// n2, which took over from n0 at 8.60 s". A reply after the takeover came
// from the new primary: the old one was killed or demoted.
func tookOver(faults []history.Fault, from, ret int64) string {
	for _, w := range faults {
		if w.Promoted != "" && w.Start >= from && w.PromotedAt > from && w.PromotedAt <= ret {
			if w.Target != "" && w.Target != w.Promoted {
				return fmt.Sprintf(", from %s, which took over from %s at %s", w.Promoted, w.Target, at(w.PromotedAt))
			}
			return fmt.Sprintf(", from %s, the primary from %s", w.Promoted, at(w.PromotedAt))
		}
	}
	return ""
}

// endedBy says how a hold ended.
func endedBy(h *Hold) string {
	switch h.EndedBy {
	case "release":
		return "its release, or its next acquire"
	case "extend-failed":
		return "an extend that failed"
	case "history-end":
		return "the end of the run (no expiry)"
	}
	return "its lease's end"
}

// began says what started a hold.
func began(h *Hold) string {
	if h.Extend != 0 {
		return "an extend's OK after its lease had ended"
	}
	return "its acquire's OK"
}

func explainDoubleHolder(f *Finding, x explainCtx) string {
	if len(f.Holds) < 2 {
		return f.Summary
	}
	p, c := &f.Holds[0], &f.Holds[1]
	rule := "A correct lock refuses the key to everyone while a lease on it runs."
	if between(x.faults, p.Start, c.Start) != "" {
		rule += " A fault can make the server lose the key (a failover, a restart): then only a fence keeps the resource safe."
	}
	if f.Allowed {
		rule += " Allowed: " + x.allowedBecause + "."
	}
	return fmt.Sprintf("Worker %d held %s from %s (%s) and believed it until %s (%s)%s. Worker %d was told it holds at %s (%s%s) while worker %d still believed: both held it for %.1f ms. %s",
		p.Worker, f.Key, at(p.Start), began(p), at(p.End), endedBy(p), between(x.faults, p.Start, c.Start),
		c.Worker, at(c.Start), began(c), tookOver(x.faults, p.Start, c.Start), p.Worker, f.OverlapMs, rule)
}

func explainWriteOverHolder(f *Finding, c explainCtx) string {
	if len(f.Holds) < 1 || len(f.Ops) < 2 {
		return f.Summary
	}
	x, w := &f.Holds[0], &f.Ops[1].Op
	return fmt.Sprintf("Worker %d held %s with fence %d from %s to %s; worker %d's write with the bigger fence %d was accepted at %s, while worker %d still held it%s. A correct lock hands out no fence above the holder's while the holder's lease runs.",
		x.Worker, f.Key, x.Fence, at(x.Start), at(x.End), w.Worker, w.Fence, at(w.Return), x.Worker, between(c.faults, x.Start, w.Return))
}

func explainFenceNotIncreasing(f *Finding, c explainCtx) string {
	if len(f.Ops) < 2 {
		return f.Summary
	}
	a, b := &f.Ops[0].Op, &f.Ops[1].Op
	return fmt.Sprintf("The resource accepted worker %d's write with fence %d at %s, then worker %d's write with fence %d at %s%s. A fenced resource accepts only a fence above every one it accepted before.",
		a.Worker, a.Fence, at(a.Return), b.Worker, b.Fence, at(b.Return), between(c.faults, a.Call, b.Return))
}

func explainStaleWrite(f *Finding, c explainCtx) string {
	if len(f.Ops) < 2 {
		return f.Summary
	}
	a, w := &f.Ops[0].Op, &f.Ops[1].Op
	return fmt.Sprintf("%s with fence %d; worker %d's write with the older fence %d was accepted at %s, before any write had shown the resource fence %d%s. No fenced resource can know better (allowed); a holder that outlived its lease writes so.",
		upper(did(a)), a.Fence, w.Worker, w.Fence, at(w.Return), a.Fence, between(c.faults, a.Call, w.Return))
}

func explainDuplicateFence(f *Finding, c explainCtx) string {
	if len(f.Ops) < 2 {
		return f.Summary
	}
	a, b := &f.Ops[0].Op, &f.Ops[1].Op
	rule := "A correct lock draws every fence from one counter that never goes back."
	if f.Allowed {
		rule = "A fault that lost the counter's last increments can do this (allowed): the resource's strict check keeps the duplicate harmless."
	}
	return fmt.Sprintf("%s with fence %d, and %s with the same fence%s. %s",
		upper(did(a)), a.Fence, did(b), between(c.faults, a.Call, b.Return), rule)
}

func explainLostIncrement(f *Finding, c explainCtx) string {
	if len(f.Ops) < 2 {
		return f.Summary
	}
	a, b := &f.Ops[0].Op, &f.Ops[1].Op
	what := "both read the same value: their read-modify-writes overlapped"
	if a.Read != b.Read {
		what = fmt.Sprintf("worker %d read a value older than worker %d had written", b.Worker, a.Worker)
	}
	return fmt.Sprintf("Worker %d read the counter at %d and wrote %d (%s-%s); worker %d read %d and wrote %d (%s-%s)%s: %s, and an increment was lost. A correct lock keeps its holders apart; an unfenced holder that outlived its lease (a stall, a pause) does this too, and only a fence stops it.",
		a.Worker, a.Read, a.Wrote, at(a.Call), at(a.Return), b.Worker, b.Read, b.Wrote, at(b.Call), at(b.Return), between(c.faults, min(a.Call, b.Call), max(a.Return, b.Return)), what)
}

func explainIllegal(f *Finding, c explainCtx) string {
	first := ""
	if len(f.Ops) > 0 {
		first = "; the first is " + did(&f.Ops[0].Op)
	}
	what := "lock"
	if f.Kind == KindIllegalFence {
		what = "fence-counter"
	}
	return fmt.Sprintf("No one order of the %s operations on %s between %s and %s explains every reply they got%s%s. A correct server's replies are those of one order of the commands, each taking effect between its call and its return.",
		what, f.Key, at(f.Start), at(f.End), first, between(c.faults, f.Start, f.End))
}

func explainUndecided(f *Finding, c explainCtx) string {
	next := "a longer timeout (checker.Options.Timeout), or a shorter run, may decide it"
	if f.Kind == KindUndecided {
		next = "an operation whose outcome is unknown, from before them, may have taken effect among them"
	}
	return fmt.Sprintf("The linearizability check could not decide the operations on %s between %s and %s%s: %s. Not a failure: %s.",
		f.Key, at(f.Start), at(f.End), between(c.faults, f.Start, f.End), f.Summary, next)
}

func explainNoExpiry(f *Finding, c explainCtx) string {
	if len(f.Ops) < 1 {
		return f.Summary
	}
	op := &f.Ops[0].Op
	if op.Kind == history.Observe {
		return fmt.Sprintf("A read of %s at %s found it without expiry (PTTL -1)%s: whoever holds it holds it forever. A correct lock sets a lease with every write of the key.",
			f.Key, at(op.Return), between(c.faults, op.Call, op.Return))
	}
	return fmt.Sprintf("%s and sent no lease (no PX): a SET without one also drops the old TTL, and the key never expires. A correct lock sets a lease with every write of the key.", upper(did(op)))
}

func explainWrongLease(f *Finding, c explainCtx) string {
	if len(f.Ops) < 2 {
		return f.Summary
	}
	set, obs := &f.Ops[0].Op, &f.Ops[1].Op
	return fmt.Sprintf("%s, asking for %d ms; the read at %s found its token with %d ms left%s. A correct lock's acquire and extend set the lease they ask for.",
		upper(did(set)), set.TTLms, at(obs.Return), obs.Read, between(c.faults, set.Call, obs.Return))
}

func explainLateGrant(f *Finding, c explainCtx) string {
	if len(f.Ops) < 1 {
		return f.Summary
	}
	op := &f.Ops[0].Op
	end := op.Call + op.TTLms*1e6
	return fmt.Sprintf("Worker %d's %s was called at %s asking for %d ms, and said OK at %s, %.1f ms after that lease had ended%s. Redlock's validity check (TTL - elapsed - drift > 0) refuses such a grant: the holder would act on a lock that is gone.",
		op.Worker, op.Kind, at(op.Call), op.TTLms, at(op.Return), float64(op.Return-end)/1e6, between(c.faults, op.Call, op.Return))
}

func explainStuck(f *Finding, c explainCtx) string {
	first := ""
	if len(f.Ops) > 0 {
		first = " (the first: " + did(&f.Ops[0].Op) + ")"
	}
	n := fmt.Sprint(len(f.Ops))
	if len(f.Ops) >= maxOpsPerFinding {
		n = "at least " + n
	}
	return fmt.Sprintf("%s stayed taken from %s, when every lease set until then could have ended, to %s: %s acquires and reads found it held%s%s. A correct lock's key expires with its last lease.",
		f.Key, at(f.Start), at(f.End), n, first, between(c.faults, f.Start, f.End))
}

func explainLostLock(f *Finding, c explainCtx) string {
	if len(f.Ops) < 1 {
		return f.Summary
	}
	op := &f.Ops[0].Op
	return fmt.Sprintf("%s: the lock was gone from under it (its lease ended, or another took the key)%s. Allowed: a correct client says so and stops; what it wrote before is the resource check's.",
		upper(did(op)), between(c.faults, op.Call, op.Return))
}

func explainRejected(f *Finding, c explainCtx) string {
	if len(f.Ops) < 1 {
		return f.Summary
	}
	op := &f.Ops[0].Op
	rule := "Allowed: an error reply during a fault (READONLY, LOADING, CLUSTERDOWN) may simply have hit the wrong moment."
	if !f.Allowed {
		rule = "The server does not understand the command as sent: a lock whose release is refused so is held until its lease ends, every time."
	}
	return fmt.Sprintf("%s%s. %s", upper(did(op)), between(c.faults, op.Call, op.Return), rule)
}

// upper starts s with a capital letter.
func upper(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
