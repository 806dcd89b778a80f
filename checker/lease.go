package checker

import (
	"fmt"

	"github.com/lockcheck/lockcheck/history"
)

// setDuring says whether an acquire or extend with token tok was called
// after the observation at k.ops[j] began and before it returned: it may
// have set the lease the observation read.
func setDuring(h *history.History, k *keyOps, j int, tok int32, until int64) bool {
	for n := j + 1; n < len(k.ops) && h.Ops[k.ops[n]].Call <= until; n++ {
		if kind := h.Ops[k.ops[n]].Kind; k.tok[n] == tok && (kind == history.Acquire || kind == history.Extend) {
			return true
		}
	}
	return false
}

// wrongLease finds a lease no acquire or extend asked for: an observation
// that reads a holder's token with a time left that the holder's last
// acquire or extend cannot have set. A lock command sets the lease at
// some instant between its call and its return, so the key must expire
// between call + TTL and return + TTL; PTTL read between the observation's
// call and return places the server's deadline within its own bounds. Where
// the two do not meet, the lease is longer (an extend that reset the
// expiry to something else, a unit mistake) or shorter (an extend that kept
// the old deadline) than the holder was promised.
//
// It judges only what it can: the token's last command before the
// observation must have returned OK before the observation was called (an
// unknown one may land at any time; one still open may land during it), no
// command of the token may have been called while the observation was
// open, and no loss window may meet the stretch (a clock fault moves
// deadlines).
func wrongLease(h *history.History, k *keyOps, loss lossWindows, tol int64, faults faultIndex, out *findings) {
	last := make(map[int32]int32) // token id -> op index of its latest acquire or extend
	for j, i := range k.ops {
		op := &h.Ops[i]
		tok := k.tok[j]
		switch op.Kind {
		case history.Acquire, history.Extend:
			if tok != 0 && (op.Kind == history.Extend || op.Outcome != history.Fail) {
				last[tok] = i
			}
			continue
		case history.Observe:
		default:
			continue
		}
		if op.Outcome != history.OK || op.Read < 0 || tok == 0 {
			continue
		}
		li, ok := last[tok]
		if !ok {
			continue
		}
		set := &h.Ops[li]
		if set.Outcome != history.OK || set.TTLms <= 0 || set.Return > op.Call || loss.meets(set.Call, op.Return) ||
			setDuring(h, k, j, tok, op.Return) {
			continue
		}
		ttl := set.TTLms * 1e6
		// the server's deadline as the observation places it
		lo, hi := op.Call+op.Read*1e6, op.Return+(op.Read+1)*1e6
		var what string
		switch {
		case lo > set.Return+ttl+tol:
			what = "longer"
		case hi+tol < set.Call+ttl:
			what = "shorter"
		default:
			continue
		}
		out.add(Finding{Kind: KindWrongLease, Key: k.name,
			Summary: fmt.Sprintf("%s: worker %d's %s asked for %d ms, but the key held its token with %d ms left %.1f ms after it returned: a lease %s than asked for",
				k.name, set.Worker, set.Kind, set.TTLms, op.Read, float64(op.Call-set.Return)/1e6, what),
			Start: set.Call, End: op.Return, Ops: []OpRef{{Index: int(li), Op: *set}, {Index: int(i), Op: *op}},
			Faults: faults.during(set.Call, op.Return)})
	}
}
