package checker

import (
	"fmt"
	"slices"

	"github.com/lockcheck/lockcheck/history"
)

// fenceOps are a key's accepted fenced writes and fenced OK acquires, each
// in call order.
func fenceOps(h *history.History, k *keyOps) (writes, acquires []int32) {
	for _, i := range k.ops {
		op := &h.Ops[i]
		if !op.HasFence || op.Outcome != history.OK {
			continue
		}
		switch op.Kind {
		case history.Write:
			writes = append(writes, i)
		case history.Acquire:
			acquires = append(acquires, i)
		}
	}
	return writes, acquires
}

// byReturn returns the indices sorted by return time.
func byReturn(h *history.History, idx []int32) []int32 {
	out := slices.Clone(idx)
	slices.SortStableFunc(out, func(a, b int32) int {
		ra, rb := h.Ops[a].Return, h.Ops[b].Return
		switch {
		case ra < rb:
			return -1
		case ra > rb:
			return 1
		}
		return 0
	})
	return out
}

// fenceChecks finds, on one key:
//   - a write accepted with a fence not above one accepted before it (one
//     that returned before it was called), or equal to any other accepted
//     write's fence: the resource must reject both;
//   - a write accepted from a stale holder: a fence above the write's had
//     been handed out (its acquire returned) before the write was called.
//     The resource cannot know a fence no write has shown it, so accepting
//     this write is what fencing does (the newer holder's later write
//     supersedes it; a failover that rolls the counter back makes the newer
//     holder's fence the lower one): it is listed with the lost-lock
//     incidents, allowed, for a reader to see who wrote after losing a lock;
//   - one fence handed to two acquires. When a fault that can roll the
//     counter back (a failover losing the INCR with the lock) lies between
//     them, a correct server does that, and the resource's strict check is
//     what keeps the duplicate harmless: it goes to info (the lost-lock
//     incidents) instead, allowed.
func fenceChecks(h *history.History, k *keyOps, loss lossWindows, faults faultIndex, out, info *findings) {
	writes, acquires := fenceOps(h, k)
	ops := func(i ...int32) []OpRef {
		refs := make([]OpRef, len(i))
		for n, x := range i {
			refs[n] = OpRef{Index: int(x), Op: h.Ops[x]}
		}
		return refs
	}
	add := func(kind FindingKind, first, second int32, allowed bool, format string, args ...any) {
		a, b := &h.Ops[first], &h.Ops[second]
		from, to := min(a.Call, b.Call), max(a.Return, b.Return)
		sink := out
		if allowed {
			sink = info
		}
		sink.add(Finding{Kind: kind, Key: k.name, Summary: fmt.Sprintf(format, args...), Start: from, End: to,
			Ops: ops(first, second), Faults: faults.during(from, to), Allowed: allowed})
	}

	// accepted writes against writes accepted before them
	wret := byReturn(h, writes)
	seen := make(map[int64]int32, len(writes))
	backwards := make(map[int32]bool)
	best, bestAt, p := int64(0), int32(-1), 0
	for _, w := range writes {
		op := &h.Ops[w]
		for p < len(wret) && h.Ops[wret[p]].Return < op.Call {
			if f := h.Ops[wret[p]].Fence; bestAt < 0 || f > best {
				best, bestAt = f, wret[p]
			}
			p++
		}
		flagged := false
		if bestAt >= 0 && op.Fence <= best {
			add(KindFenceNotIncreasing, bestAt, w, false, "%s: write with fence %d accepted after a write with fence %d", k.name, op.Fence, best)
			flagged = true
			backwards[w] = true
		}
		if first, dup := seen[op.Fence]; dup && !flagged {
			add(KindFenceNotIncreasing, first, w, false, "%s: two writes with fence %d accepted", k.name, op.Fence)
		} else if !dup {
			seen[op.Fence] = w
		}
	}

	// accepted writes against fences handed out before them
	aret := byReturn(h, acquires)
	best, bestAt, p = 0, -1, 0
	for _, w := range writes {
		op := &h.Ops[w]
		for p < len(aret) && h.Ops[aret[p]].Return < op.Call {
			if f := h.Ops[aret[p]].Fence; bestAt < 0 || f > best {
				best, bestAt = f, aret[p]
			}
			p++
		}
		if bestAt >= 0 && op.Fence < best && !backwards[w] {
			add(KindStaleWrite, bestAt, w, true, "%s: write with fence %d from worker %d accepted after fence %d went to worker %d (no write had shown it yet)",
				k.name, op.Fence, op.Worker, best, h.Ops[bestAt].Worker)
		}
	}

	// one fence, two acquires
	handed := make(map[int64]int32, len(acquires))
	for _, a := range acquires {
		op := &h.Ops[a]
		first, dup := handed[op.Fence]
		if !dup {
			handed[op.Fence] = a
			continue
		}
		if loss.meets(h.Ops[first].Call, op.Return) {
			add(KindDuplicateFence, first, a, true, "%s: fence %d handed to worker %d and again to worker %d after a fault rolled the counter back",
				k.name, op.Fence, h.Ops[first].Worker, op.Worker)
			continue
		}
		add(KindDuplicateFence, first, a, false, "%s: fence %d handed to worker %d and worker %d", k.name, op.Fence, h.Ops[first].Worker, op.Worker)
	}
}
