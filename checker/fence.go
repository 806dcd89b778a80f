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

// withFence says whether op draws or presents a fence: the fence check
// judges only a history that has one.
func withFence(op *history.Op) bool { return op.HasFence }

// checkFences is the fence check on one key: the resource's and the
// counter's rules (fenceChecks), and writes over a holder with a smaller
// fence (writesOverHolders). What a fault can explain is a lost-lock
// incident, allowed.
func checkFences(x *keyCheck, out *findings) {
	info := x.to(LostLocks)
	fenceChecks(x.h, x.k, x.counterLoss, x.faults, out, info, x.cc)
	writesOverHolders(x.h, x.k, x.holds, x.loss, x.faults, out, info)
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
func fenceChecks(h *history.History, k *keyOps, loss lossWindows, faults faultIndex, out, info *findings, cc *chunkCtx) {
	x := &fenceScan{h: h, k: k, faults: faults, out: out, info: info, cc: cc, fc: &cc.carry.fence}
	writes, acquires := fenceOps(h, k)
	backwards := x.writesBackwards(writes)
	x.staleWrites(writes, acquires, backwards)
	x.handedTwice(acquires, loss)
}

// fenceScan is fenceChecks on one key (chunk): what its three rules share.
type fenceScan struct {
	h         *history.History
	k         *keyOps
	faults    faultIndex
	out, info *findings
	cc        *chunkCtx
	fc        *fenceCarry
}

// add reports the second operation against the first, to info (the
// lost-lock incidents) when allowed.
func (x *fenceScan) add(kind FindingKind, first ref, second int32, allowed bool, format string, args ...any) {
	b := &x.h.Ops[second]
	from, to := min(first.call, b.Call), max(first.ret, b.Return)
	sink := x.out
	if allowed {
		sink = x.info
	}
	sink.add(Finding{Kind: kind, Key: x.k.name, Summary: fmt.Sprintf(format, args...), Start: from, End: to,
		Ops: []OpRef{x.cc.opRef(x.h, first), {Index: int(second), Op: *b}}, Faults: x.faults.during(from, to), Allowed: allowed})
}

func (x *fenceScan) local(i int32) ref { return x.cc.refOf(x.h, i, 0) }

// writesBackwards checks accepted writes against the writes accepted
// before them, and returns those flagged as going backwards; the writes
// still open at the last cut return among this chunk's.
func (x *fenceScan) writesBackwards(writes []int32) map[int32]bool {
	h, fc, cc := x.h, x.fc, x.cc
	pending := make([]int32, 0, len(fc.open)+len(writes))
	for _, a := range fc.open {
		pending = append(pending, a.local)
	}
	wret := byReturn(h, append(pending, writes...))
	// seen keeps only fences above best: a write at or below it is
	// flagged as going backwards and not looked up
	seen := make(map[int64]int32, len(fc.seen))
	for f, a := range fc.seen {
		seen[f] = a.local
	}
	backwards := make(map[int32]bool)
	best, bestAt, p := fc.bestW, int32(-1), 0
	if fc.bestWrite != nil {
		bestAt = fc.bestWrite.local
	}
	advance := func(until int64) {
		moved := false
		for p < len(wret) && h.Ops[wret[p]].Return < until {
			if f := h.Ops[wret[p]].Fence; bestAt < 0 || f > best {
				best, bestAt, moved = f, wret[p], true
			}
			p++
		}
		if moved {
			for f := range seen {
				if f <= best {
					delete(seen, f)
				}
			}
		}
	}
	for _, w := range writes {
		op := &h.Ops[w]
		advance(op.Call)
		flagged := false
		if bestAt >= 0 && op.Fence <= best {
			x.add(KindFenceNotIncreasing, x.local(bestAt), w, false, "%s: write with fence %d accepted after a write with fence %d", x.k.name, op.Fence, best)
			flagged = true
			backwards[w] = true
		}
		if first, dup := seen[op.Fence]; dup && !flagged {
			x.add(KindFenceNotIncreasing, x.local(first), w, false, "%s: two writes with fence %d accepted", x.k.name, op.Fence)
		} else if !dup {
			seen[op.Fence] = w
		}
	}
	if cc.cut != never {
		advance(cc.cut)
		fc.bestW, fc.bestWrite, fc.open, fc.seen = best, nil, nil, make(map[int64]*anchor, len(seen))
		if bestAt >= 0 {
			fc.bestWrite = cc.anchorOf(h, bestAt)
		}
		for _, w := range wret[p:] {
			fc.open = append(fc.open, cc.anchorOf(h, w))
		}
		for f, w := range seen {
			fc.seen[f] = cc.anchorOf(h, w)
		}
	}
	return backwards
}

// staleWrites checks accepted writes against the fences handed out
// before them (every acquire of an earlier chunk returned before this
// chunk's writes); a write already flagged as going backwards is not
// listed again.
func (x *fenceScan) staleWrites(writes, acquires []int32, backwards map[int32]bool) {
	h, fc, cc := x.h, x.fc, x.cc
	aret := byReturn(h, acquires)
	best, bestAt, p := fc.bestA, int32(-1), 0
	if fc.bestAcquire != nil {
		bestAt = fc.bestAcquire.local
	}
	advanceA := func(until int64) {
		for p < len(aret) && h.Ops[aret[p]].Return < until {
			if f := h.Ops[aret[p]].Fence; bestAt < 0 || f > best {
				best, bestAt = f, aret[p]
			}
			p++
		}
	}
	for _, w := range writes {
		op := &h.Ops[w]
		advanceA(op.Call)
		if bestAt >= 0 && op.Fence < best && !backwards[w] {
			x.add(KindStaleWrite, x.local(bestAt), w, true, "%s: write with fence %d from worker %d accepted after fence %d went to worker %d (no write had shown it yet)",
				x.k.name, op.Fence, op.Worker, best, h.Ops[bestAt].Worker)
		}
	}
	if cc.cut != never {
		advanceA(cc.cut)
		fc.bestA, fc.bestAcquire = best, nil
		if bestAt >= 0 {
			fc.bestAcquire = cc.anchorOf(h, bestAt)
		}
	}
}

// handedTwice finds one fence handed to two acquires: every fence handed
// out is remembered, in a compact ref, for as long as the key is checked.
// A fault in loss between them that can roll the counter back makes the
// duplicate allowed.
func (x *fenceScan) handedTwice(acquires []int32, loss lossWindows) {
	fc, name := x.fc, x.k.name
	if fc.handed == nil {
		fc.handed = make(map[int64]ref, len(acquires))
	}
	for _, a := range acquires {
		op := &x.h.Ops[a]
		first, dup := fc.handed[op.Fence]
		if !dup {
			fc.handed[op.Fence] = x.cc.refOf(x.h, a, 0)
			continue
		}
		if loss.meets(first.call, op.Return) {
			x.add(KindDuplicateFence, first, a, true, "%s: fence %d handed to worker %d and again to worker %d after a fault rolled the counter back",
				name, op.Fence, first.worker, op.Worker)
			continue
		}
		x.add(KindDuplicateFence, first, a, false, "%s: fence %d handed to worker %d and worker %d", name, op.Fence, first.worker, op.Worker)
	}
}

// fenceCarry is what fenceChecks hands to a key's next chunk.
type fenceCarry struct {
	// bestWrite has the highest fence (bestW) of the accepted writes that
	// returned before the cut; open are those that returned after it;
	// seen are the accepted writes' fences above bestW.
	bestW     int64
	bestWrite *anchor
	open      []*anchor
	seen      map[int64]*anchor
	// bestAcquire drew the highest fence (bestA) handed out.
	bestA       int64
	bestAcquire *anchor
	// handed is every fence handed out, with the acquire that drew it.
	handed map[int64]ref
}
