package checker

import (
	"fmt"
	"slices"

	"github.com/lockcheck/lockcheck/history"
)

// writesOverHolders finds accepted writes that no correct fenced client can
// produce: a write accepted from one worker while another worker's hold
// covered the whole write, with a fence above that holder's.
//
// Why it cannot happen with the fence drawn atomically with the lock: let
// A write at t with fence fA while X holds at t with fence fX < fA. Had A's
// acquire come first, A's lease ended before X's, and A's fence would be the
// smaller one. Had X's come first, A's acquire could only succeed after X's
// lease ended, after t, yet A wrote at t after its acquire returned. So the
// fence order contradicts the lock order: the fence was drawn outside the
// lock step (an INCR after the SET), or the resource's check is wrong. A
// failover that rolls the counter back can do it too; inside a loss window
// it is listed with the lost-lock incidents instead.
func writesOverHolders(h *history.History, k *keyOps, holds []Hold, loss lossWindows, faults faultIndex, out, info *findings) {
	writes, _ := fenceOps(h, k)
	if len(writes) == 0 || len(holds) == 0 {
		return
	}
	byStart := slices.Clone(holds)
	slices.SortFunc(byStart, func(a, b Hold) int { return cmpInt64(a.Start, b.Start) })
	byCall := slices.Clone(writes)
	slices.SortFunc(byCall, func(a, b int32) int { return cmpInt64(h.Ops[a].Call, h.Ops[b].Call) })
	var active []Hold
	next := 0
	for _, w := range byCall {
		op := &h.Ops[w]
		for next < len(byStart) && byStart[next].Start <= op.Call {
			active = append(active, byStart[next])
			next++
		}
		// A hold that ended before this write's call covers no later write.
		active = slices.DeleteFunc(active, func(x Hold) bool { return x.End < op.Call })
		for _, x := range active {
			if x.Worker == op.Worker || !x.HasFence || x.Fence >= op.Fence || x.End < op.Return || x.End <= x.Start {
				continue
			}
			from, to := x.Start, op.Return
			f := Finding{Kind: KindWriteOverHolder, Key: k.name, Start: from, End: to,
				Summary: fmt.Sprintf("%s: write with fence %d from worker %d accepted while worker %d held the lock with fence %d",
					k.name, op.Fence, op.Worker, x.Worker, x.Fence),
				Ops:    []OpRef{{Index: x.Acquire, Op: h.Ops[x.Acquire]}, {Index: int(w), Op: *op}},
				Holds:  []Hold{x},
				Faults: faults.during(from, to)}
			if loss.meets(h.Ops[x.Acquire].Call, op.Return) {
				f.Allowed = true
				info.add(f)
			} else {
				out.add(f)
			}
			break
		}
	}
}

func cmpInt64(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
