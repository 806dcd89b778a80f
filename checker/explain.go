package checker

import (
	"context"
	"fmt"
	"math"
	"runtime"
	"sort"
	"time"

	"github.com/anishathalye/porcupine"

	"github.com/lockcheck/lockcheck/history"
)

// Picture is what porcupine's visualization needs for part of a history:
// the model, porcupine's verbose answer, and which part it is.
type Picture struct {
	Model  porcupine.Model
	Info   porcupine.LinearizationInfo
	Result porcupine.CheckResult
	// Failing says the partitions drawn are the ones that are not
	// linearizable (or undecided); otherwise they are the first segments.
	Failing bool
	// Partitions and Ops count what is drawn; Start and End bound it.
	Partitions, Ops int
	Start, End      int64
}

// Explain re-checks the part of h worth a picture with porcupine's verbose
// checker: every partition (a segment's lock or fence-counter operations)
// that is not linearizable, with the unknown operations carried in that
// decided it; or, when all are, the first segments of each key in turn. It
// stops adding partitions past maxOps operations: porcupine's page is for
// reading, not for a million operations.
func Explain(ctx context.Context, h *history.History, opts Options, maxOps int) (*Picture, error) {
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, fmt.Errorf("checker options: %w", err)
	}
	if err := validate(h); err != nil {
		return nil, fmt.Errorf("explain history: %w", err)
	}
	if opts.Workers <= 0 {
		opts.Workers = runtime.GOMAXPROCS(0)
	}
	keys := groupByKey(h)
	loss, counterLoss := newLossWindows(h, h.End(), opts), newCounterLoss(h, h.End(), opts)
	tol := int64(opts.ClockTolerance)
	perKey := make([][]segment, len(keys))
	parallel(len(keys), opts.Workers, func(ki int) {
		keys[ki].prepare(h)
		perKey[ki] = segments(h, keys[ki], ki, loss, counterLoss, tol)
	})
	var segs []segment
	for _, s := range perKey {
		segs = append(segs, s...)
	}
	m := &model{loss: loss, counterLoss: counterLoss, tol: tol}
	c := newLinChecker(h, keys, segs, m, time.Now().Add(opts.Timeout))
	chosen := c.run(ctx, opts.Workers)
	pic := &Picture{Failing: len(chosen) > 0}
	if !pic.Failing {
		chosen = firstSegments(segs, perKey, maxOps)
	}
	sort.Slice(chosen, func(i, j int) bool {
		if chosen[i].seg != chosen[j].seg {
			return chosen[i].seg < chosen[j].seg
		}
		return !chosen[i].fence
	})
	var parts [][]porcupine.Operation
	for _, v := range chosen {
		if pic.Ops >= maxOps && len(parts) > 0 {
			break
		}
		ops := c.partition(v)
		parts = append(parts, ops)
		pic.Ops += len(ops)
	}
	pic.Partitions = len(parts)
	all := denseClients(parts)
	pic.Start, pic.End = span(all)
	pm := m.porcupineModel()
	pm.Partition = func([]porcupine.Operation) [][]porcupine.Operation { return parts }
	left := time.Until(time.Now().Add(opts.Timeout))
	pic.Model = pm
	pic.Result, pic.Info = porcupine.CheckOperationsVerbose(pm, all, left)
	return pic, nil
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
	if len(v.extra) > 0 {
		label += fmt.Sprintf(" (+%d earlier unknown operations)", len(v.extra))
	}
	return porcupineOps(c.h, &b, v.extra, ops, label)
}

// firstSegments picks, key by key in turn, each key's next segment until
// maxOps operations are chosen.
func firstSegments(segs []segment, perKey [][]segment, maxOps int) []partVerdict {
	var out []partVerdict
	first := make([]int, len(perKey)) // index in segs of each key's first segment
	for ki, n := 0, 0; ki < len(perKey); ki++ {
		first[ki] = n
		n += len(perKey[ki])
	}
	total := 0
	for round := 0; total < maxOps; round++ {
		added := false
		for ki := range perKey {
			if round >= len(perKey[ki]) || total >= maxOps {
				continue
			}
			si := first[ki] + round
			seg := &segs[si]
			total += int(seg.hi-seg.lo) + int(seg.fhi-seg.flo)
			out = append(out, partVerdict{seg: si, res: porcupine.Ok})
			if seg.fhi > seg.flo {
				out = append(out, partVerdict{seg: si, fence: true, res: porcupine.Ok})
			}
			added = true
		}
		if !added {
			break
		}
	}
	return out
}

// denseClients renumbers client ids from 0 in order, as porcupine's page
// draws one row per id up to the largest.
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
