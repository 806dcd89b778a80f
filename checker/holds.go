package checker

import (
	"github.com/lockcheck/lockcheck/history"
)

// openHold is a hold still being built while a key's ops are walked.
type openHold struct {
	at       int // index in the key's holds
	leaseEnd int64
}

// holdsOf computes the hold intervals of one key (DESIGN.md, "Verdicts"):
// from an OK acquire's return until the earliest of its release's call, a
// failed extend's return and its own lease end, where the lease ends at the
// last acquire or successful extend call + TTL. An extend called after the
// lease ended does not revive the hold: the client should have stopped. An
// unknown extend does not lengthen it: the client cannot know it worked.
func holdsOf(h *history.History, k *keyOps, end int64) []Hold {
	var holds []Hold
	open := make(map[int32]openHold)
	closeAt := func(t int32, at int64, by string) {
		o := open[t]
		hd := &holds[o.at]
		if o.leaseEnd < at {
			at, by = o.leaseEnd, "lease"
		}
		hd.End, hd.EndedBy = max(at, hd.Start), by
		delete(open, t)
	}
	for j, i := range k.ops {
		op := &h.Ops[i]
		t := k.tok[j]
		o, isOpen := open[t]
		switch op.Kind {
		case history.Acquire:
			if op.Outcome != history.OK {
				continue
			}
			if isOpen { // the same token acquired twice: the first hold ends here
				closeAt(t, op.Call, "release")
			}
			holds = append(holds, Hold{Key: k.name, Client: op.Client, Worker: op.Worker, Token: op.Token,
				Fence: op.Fence, HasFence: op.HasFence, Start: op.Return, Acquire: int(i)})
			open[t] = openHold{at: len(holds) - 1, leaseEnd: leaseEnd(op.Call, op.TTLms)}
		case history.Extend:
			if !isOpen {
				continue
			}
			if op.Call > o.leaseEnd {
				closeAt(t, o.leaseEnd, "lease")
				continue
			}
			switch op.Outcome {
			case history.OK:
				o.leaseEnd = max(o.leaseEnd, leaseEnd(op.Call, op.TTLms))
				open[t] = o
			case history.Fail:
				closeAt(t, op.Return, "extend-failed")
			}
		case history.Release:
			if isOpen {
				closeAt(t, op.Call, "release")
			}
		}
	}
	for _, o := range open {
		hd := &holds[o.at]
		hd.End, hd.EndedBy = o.leaseEnd, "lease"
		if o.leaseEnd == never { // no expiry: held until the run stopped
			hd.End, hd.EndedBy = end, "history-end"
		}
		hd.End = max(hd.End, hd.Start)
	}
	return holds
}

func leaseEnd(call, ttlMs int64) int64 {
	if ttlMs <= 0 {
		return never
	}
	return call + ttlMs*1e6
}
