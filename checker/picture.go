package checker

import (
	"fmt"
	"math"
	"sort"
	"time"

	"github.com/anishathalye/porcupine"
)

// DefaultPictureOps bounds the operations a Picture draws: porcupine's
// page is for reading, not for a million operations.
const DefaultPictureOps = 1500

// Picture is what porcupine's visualization needs, kept from the check's
// own porcupine search: the partitions that are not linearizable (or
// undecided), each with the LinearizationInfo of the search that decided
// it; or, when every partition is linearizable, the first segments of each
// key in turn, checked once for the picture.
type Picture struct {
	Model porcupine.Model
	// Failing says the parts are the partitions that are not linearizable
	// or undecided.
	Failing bool
	Parts   []PicturePart
	// Why says why a passing history's picture has no part.
	Why string
}

// PicturePart is one porcupine answer and what it drew.
type PicturePart struct {
	Label  string
	Result porcupine.CheckResult
	Info   porcupine.LinearizationInfo
	// Partitions and Ops count what is drawn; Start and End bound it.
	Partitions, Ops int
	Start, End      int64
}

// Ops counts the operations of every part.
func (p *Picture) Ops() int {
	n := 0
	for _, part := range p.Parts {
		n += part.Ops
	}
	return n
}

// shown is a partition as porcupine saw it, kept with the verdict that
// the picture may draw.
type shown struct {
	info  porcupine.LinearizationInfo
	ops   int
	start int64
	end   int64
	label string
}

// search runs porcupine on a partition's operations, renumbered so that
// the page draws one row per client of the partition, and keeps what the
// picture needs.
func (c *linChecker) search(ops []porcupine.Operation, label string, timeout time.Duration) (porcupine.CheckResult, *shown) {
	ops = denseClients([][]porcupine.Operation{ops})
	res, info := porcupine.CheckOperationsVerbose(c.pm, ops, timeout)
	start, end := span(ops)
	return res, &shown{info: info, ops: len(ops), start: start, end: end, label: label}
}

// picture gathers the failing partitions' searches, up to maxOps
// operations; with none, it checks the first segments of each key for the
// picture, within the check's deadline.
func (c *linChecker) picture(bad []partVerdict, maxOps int) *Picture {
	sort.Slice(bad, func(i, j int) bool {
		if bad[i].seg != bad[j].seg {
			return bad[i].seg < bad[j].seg
		}
		return !bad[i].fence
	})
	pic := &Picture{Model: c.pm}
	total := 0
	for _, v := range bad {
		if v.shown == nil || (total >= maxOps && len(pic.Parts) > 0) {
			continue
		}
		s := v.shown
		pic.Parts = append(pic.Parts, PicturePart{Label: s.label, Result: v.res, Info: s.info, Partitions: 1, Ops: s.ops, Start: s.start, End: s.end})
		total += s.ops
	}
	if len(pic.Parts) > 0 {
		pic.Failing = true
		return pic
	}
	var parts [][]porcupine.Operation
	ops := 0
	for _, v := range c.firstSegments(maxOps) {
		p := c.partition(v)
		parts = append(parts, p)
		ops += len(p)
	}
	if len(parts) == 0 {
		pic.Why = fmt.Sprintf("every segment has more than %d operations, too many to draw", maxOps/pictureShare)
		return pic
	}
	all := denseClients(parts)
	pm := c.pm
	pm.Partition = func([]porcupine.Operation) [][]porcupine.Operation { return parts }
	left := max(time.Until(c.deadline), time.Second)
	res, info := porcupine.CheckOperationsVerbose(pm, all, left)
	start, end := span(all)
	pic.Model = pm
	pic.Parts = []PicturePart{{Label: fmt.Sprintf("the first %d partitions", len(parts)), Result: res, Info: info, Partitions: len(parts), Ops: ops, Start: start, End: end}}
	return pic
}

// partition lays one segment's lock or fence partition out for porcupine,
// labelled for the picture.
func (c *linChecker) partition(v partVerdict) []porcupine.Operation {
	seg := &c.segs[v.seg]
	k := c.keys[seg.key]
	label := fmt.Sprintf("%s, segment from %s", c.label(seg, v.fence), secs(k.lock[seg.lo].call))
	if v.fence {
		ops := k.fence[seg.flo:seg.fhi]
		b := fenceBegin(seg, ops)
		return porcupineOps(c.h, &b, nil, ops, label)
	}
	ops := k.lock[seg.lo:seg.hi]
	b := lockBegin(ops, v.extra)
	return porcupineOps(c.h, &b, v.extra, ops, label)
}

// pictureShare: a segment drawn in a passing history's picture has at
// most 1/pictureShare of the picture's operations.
const pictureShare = 5

// segOps counts a segment's lock and fence operations.
func (c *linChecker) segOps(si int) int {
	seg := &c.segs[si]
	return int(seg.hi-seg.lo) + int(seg.fhi-seg.flo)
}

// firstSegments picks, key by key in turn, each key's next segment of at
// most maxOps/pictureShare operations, until maxOps operations are
// chosen. Segments come grouped by key.
func (c *linChecker) firstSegments(maxOps int) []partVerdict {
	var perKey [][]int // each key's segments, by index in c.segs
	for si := range c.segs {
		if si == 0 || c.segs[si].key != c.segs[si-1].key {
			perKey = append(perKey, nil)
		}
		perKey[len(perKey)-1] = append(perKey[len(perKey)-1], si)
	}
	var out []partVerdict
	total := 0
	next := make([]int, len(perKey)) // each key's next segment to look at
	for total < maxOps {
		added := false
		for ki, segs := range perKey {
			// a long segment is skipped: porcupine's search of a
			// linearizable one of many concurrent operations can take
			// seconds and hundreds of MiB, for a picture
			for next[ki] < len(segs) && c.segOps(segs[next[ki]]) > maxOps/pictureShare {
				next[ki]++
			}
			if next[ki] >= len(segs) || total >= maxOps {
				continue
			}
			si := segs[next[ki]]
			next[ki]++
			seg := &c.segs[si]
			if seg.hi > seg.lo {
				out = append(out, partVerdict{seg: si, res: porcupine.Ok})
			}
			if seg.fhi > seg.flo {
				out = append(out, partVerdict{seg: si, fence: true, res: porcupine.Ok})
			}
			total += int(seg.hi-seg.lo) + int(seg.fhi-seg.flo)
			added = true
		}
		if !added {
			break
		}
	}
	return out
}

// denseClients renumbers client ids from 0 in order, as porcupine's page
// draws one row per id up to the largest. The search does not look at ids.
func denseClients(parts [][]porcupine.Operation) []porcupine.Operation {
	ids := map[int]int{}
	var seen []int
	for _, p := range parts {
		for _, op := range p {
			if _, ok := ids[op.ClientId]; !ok {
				ids[op.ClientId] = 0
				seen = append(seen, op.ClientId)
			}
		}
	}
	sort.Ints(seen)
	for i, id := range seen {
		ids[id] = i
	}
	var all []porcupine.Operation
	for _, p := range parts {
		for i := range p {
			p[i].ClientId = ids[p[i].ClientId]
		}
		all = append(all, p...)
	}
	return all
}

func span(ops []porcupine.Operation) (int64, int64) {
	lo, hi := int64(math.MaxInt64), int64(math.MinInt64)
	for _, op := range ops {
		lo = min(lo, op.Call)
		if op.Return != never {
			hi = max(hi, op.Return)
		}
		hi = max(hi, op.Call)
	}
	if lo > hi {
		return 0, 0
	}
	return lo, hi
}
