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

// lostIncrements finds, on one key, accepted counter writes that read a
// value someone else had already read (two increments from one value: one is
// lost), or a value older than one written by a write that returned before
// this one was called. Either is what a double holder does to an unfenced
// resource. Gaps (a read above the last write seen) are not reported: an
// unknown write may have filled them.
func lostIncrements(h *history.History, k *keyOps, faults faultIndex, out *findings) {
	var writes []int32
	for _, i := range k.ops {
		if counterWrite(&h.Ops[i]) {
			writes = append(writes, i)
		}
	}
	add := func(first, second int32, format string, args ...any) {
		a, b := &h.Ops[first], &h.Ops[second]
		from, to := min(a.Call, b.Call), max(a.Return, b.Return)
		out.add(Finding{Kind: KindLostIncrement, Key: k.name, Summary: fmt.Sprintf(format, args...), Start: from, End: to,
			Ops: []OpRef{{Index: int(first), Op: *a}, {Index: int(second), Op: *b}}, Faults: faults.during(from, to)})
	}
	wret := byReturn(h, writes)
	read := make(map[int64]int32, len(writes))
	best, bestAt, p := int64(0), int32(-1), 0
	for _, w := range writes {
		op := &h.Ops[w]
		for p < len(wret) && h.Ops[wret[p]].Return < op.Call {
			if v := h.Ops[wret[p]].Wrote; bestAt < 0 || v > best {
				best, bestAt = v, wret[p]
			}
			p++
		}
		if first, dup := read[op.Read]; dup {
			add(first, w, "%s: workers %d and %d both read %d and wrote %d and %d", k.name, h.Ops[first].Worker, op.Worker, op.Read, h.Ops[first].Wrote, op.Wrote)
			continue
		}
		read[op.Read] = w
		if bestAt >= 0 && op.Read < best {
			add(bestAt, w, "%s: worker %d read %d after worker %d had written %d", k.name, op.Worker, op.Read, h.Ops[bestAt].Worker, best)
		}
	}
}
