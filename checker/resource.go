package checker

import (
	"fmt"

	"github.com/lockcheck/lockcheck/history"
)

// counterWrite says whether op is an accepted read-modify-write of the
// unfenced resource counter. A write with Read == Wrote changed nothing.
func counterWrite(op *history.Op) bool {
	return op.Kind == history.Write && op.Outcome == history.OK && !op.HasFence && op.Read != op.Wrote
}

// checkCounter is the resource check on one key: the unfenced counter's
// lost increments.
func checkCounter(x *keyCheck, out *findings) { lostIncrements(x.h, x.k, x.faults, out, x.cc) }

// lostIncrements finds, on one key, accepted counter writes that read a
// value someone else had already read (two increments from one value: one is
// lost), or a value older than one written by a write that returned before
// this one was called. Either is what a double holder does to an unfenced
// resource. Gaps (a read above the last write seen) are not reported: an
// unknown write may have filled them. A read value is remembered only while
// it is not older than the best written: a later read of an older value is
// reported as older, so that what is remembered stays as small as the
// writes in flight.
func lostIncrements(h *history.History, k *keyOps, faults faultIndex, out *findings, cc *chunkCtx) {
	cr := &cc.carry.counter
	var writes []int32
	for _, i := range k.ops {
		if counterWrite(&h.Ops[i]) {
			writes = append(writes, i)
		}
	}
	add := func(first ref, second int32, format string, args ...any) {
		b := &h.Ops[second]
		from, to := min(first.call, b.Call), max(first.ret, b.Return)
		out.add(Finding{Kind: KindLostIncrement, Key: k.name, Summary: fmt.Sprintf(format, args...), Start: from, End: to,
			Ops: []OpRef{cc.opRef(h, first), {Index: int(second), Op: *b}}, Faults: faults.during(from, to)})
	}
	pending := make([]int32, 0, len(cr.open)+len(writes))
	for _, a := range cr.open {
		pending = append(pending, a.local)
	}
	wret := byReturn(h, append(pending, writes...))
	if cr.read == nil {
		cr.read = make(map[int64]ref)
	}
	read := cr.read
	best, bestAt, p := cr.bestV, int32(-1), 0
	if cr.best != nil {
		bestAt = cr.best.local
	}
	advance := func(until int64) {
		moved := false
		for p < len(wret) && h.Ops[wret[p]].Return < until {
			if v := h.Ops[wret[p]].Wrote; bestAt < 0 || v > best {
				best, bestAt, moved = v, wret[p], true
			}
			p++
		}
		if moved {
			for v := range read {
				if v < best {
					delete(read, v)
				}
			}
		}
	}
	for _, w := range writes {
		op := &h.Ops[w]
		advance(op.Call)
		if first, dup := read[op.Read]; dup {
			add(first, w, "%s: workers %d and %d both read %d and wrote %d and %d", k.name, first.worker, op.Worker, op.Read, first.value, op.Wrote)
			continue
		}
		read[op.Read] = cc.refOf(h, w, op.Wrote)
		if bestAt >= 0 && op.Read < best {
			add(cc.refOf(h, bestAt, 0), w, "%s: worker %d read %d after worker %d had written %d", k.name, op.Worker, op.Read, h.Ops[bestAt].Worker, best)
		}
	}
	if cc.cut != never {
		advance(cc.cut)
		cr.bestV, cr.best, cr.open = best, nil, nil
		if bestAt >= 0 {
			cr.best = cc.anchorOf(h, bestAt)
		}
		for _, w := range wret[p:] {
			cr.open = append(cr.open, cc.anchorOf(h, w))
		}
	}
}

// counterCarry is what lostIncrements hands to a key's next chunk.
type counterCarry struct {
	// best wrote the highest value (bestV) of the counter writes that
	// returned before the cut; open returned after it.
	bestV int64
	best  *anchor
	open  []*anchor
	// read are the values read, not older than bestV, with who read them.
	read map[int64]ref
}
