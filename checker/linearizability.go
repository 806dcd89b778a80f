package checker

import (
	"context"
	"fmt"
	"math"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/anishathalye/porcupine"

	"github.com/lockcheck/lockcheck/history"
)

// carrySteps are how many of the latest earlier unknown operations a
// failing segment is checked again with: an unknown acquire may take effect
// after the harness gave up on it, and so inside a later segment, and with it
// the unknown extends and releases of its token.
var carrySteps = []int{1, 4, 16, 64}

// partVerdict is porcupine's answer for one partition of a segment.
type partVerdict struct {
	seg   int
	fence bool
	res   porcupine.CheckResult
	// extra are the unknown operations carried in for the answer; older is
	// how many earlier ones were left out.
	extra []input
	older int
	// shown is porcupine's search of the partition, kept for the picture
	// when the answer is not Ok.
	shown *shown
}

// linChecker checks segments against the models.
type linChecker struct {
	h        *history.History
	keys     []*keyOps
	segs     []segment
	m        *model
	pm       porcupine.Model
	deadline time.Time
	// unknown holds each key's operations with an unknown outcome in call
	// order.
	unknown   [][]input
	porcupine atomic.Int64
}

func newLinChecker(h *history.History, keys []*keyOps, segs []segment, m *model, deadline time.Time) *linChecker {
	c := &linChecker{h: h, keys: keys, segs: segs, m: m, pm: m.porcupineModel(), deadline: deadline}
	c.unknown = make([][]input, len(keys))
	for ki, k := range keys {
		c.unknown[ki] = append(c.unknown[ki], k.prior...)
		for _, in := range k.lock {
			if in.out == outUnknown {
				c.unknown[ki] = append(c.unknown[ki], in)
			}
		}
	}
	return c
}

// lockBegin is the first operation of a lock partition: the key is free.
func lockBegin(ops, extra []input) input {
	first := int64(math.MaxInt64)
	if len(ops) > 0 {
		first = ops[0].call
	}
	if len(extra) > 0 {
		first = min(first, extra[0].call)
	}
	st := &state{started: true, now: first - 1, floor: first - 1}
	if len(ops) > 0 {
		st.floor = ops[0].call - 1
	}
	return input{kind: kBegin, call: first - 1, ret: first - 1, op: -1, init: st}
}

// fenceBegin starts a fence partition with the counter as it was.
func fenceBegin(seg *segment, ops []input) input {
	first := ops[0].call
	st := &state{started: true, fenced: true, fence: seg.fence, lost: seg.fenceLost, now: first - 1, floor: first - 1}
	return input{kind: kBegin, call: first - 1, ret: first - 1, op: -1, init: st}
}

func (c *linChecker) label(seg *segment, fence bool) string {
	if fence {
		return c.keys[seg.key].name + " fence"
	}
	return c.keys[seg.key].name + " lock"
}

// decide tries the greedy order, then porcupine within the deadline; a
// porcupine answer that is not Ok comes with its search, for the picture.
func (c *linChecker) decide(g *greedy, begin *input, extra, ops []input, label string) (porcupine.CheckResult, *shown) {
	if g.run(c.m, begin, extra, ops) {
		return porcupine.Ok, nil
	}
	c.porcupine.Add(1)
	left := time.Until(c.deadline)
	if left <= 0 {
		return porcupine.Unknown, nil
	}
	if len(extra) > 0 {
		label += fmt.Sprintf(" (+%d earlier unknown operations)", len(extra))
	}
	res, s := c.search(porcupineOps(c.h, begin, extra, ops, label), label, left)
	if res == porcupine.Ok {
		s = nil
	}
	return res, s
}

// lock checks a segment's lock partition, carrying earlier unknown
// operations in when it is illegal without them.
func (c *linChecker) lock(g *greedy, si int) partVerdict {
	seg := &c.segs[si]
	ops := c.keys[seg.key].lock[seg.lo:seg.hi]
	v := partVerdict{seg: si}
	if len(ops) == 0 {
		v.res = porcupine.Ok
		return v
	}
	begin := lockBegin(ops, nil)
	v.res, v.shown = c.decide(g, &begin, nil, ops, c.label(seg, false))
	if v.res != porcupine.Illegal {
		return v
	}
	earlier := c.earlierUnknown(seg.key, ops[0].call)
	for _, n := range carrySteps {
		n = min(n, len(earlier))
		if n == 0 {
			break
		}
		extra := earlier[len(earlier)-n:]
		begin := lockBegin(ops, extra)
		v.res, v.shown = c.decide(g, &begin, extra, ops, c.label(seg, false))
		v.extra, v.older = extra, c.keys[seg.key].older+len(earlier)-n
		if v.res != porcupine.Illegal || n == len(earlier) {
			break
		}
	}
	if v.res == porcupine.Illegal && v.older > 0 {
		// An older unknown operation delivered very late could still
		// explain it; do not call it illegal.
		v.res = porcupine.Unknown
	}
	return v
}

// carryUnknown leaves the key's latest unknown lock operations, with
// their tokens, to its next chunk: a failing segment is checked again
// with at most the last carrySteps of them, and counts the rest.
func carryUnknown(h *history.History, k *keyOps, cc *chunkCtx) {
	if cc.cut == never {
		return
	}
	keep := carrySteps[len(carrySteps)-1]
	var all []*anchor
	all = append(all, cc.carry.unknown...)
	for _, in := range k.lock {
		if in.out == outUnknown {
			a := cc.anchorOf(h, in.op)
			a.token = k.tokens[in.token]
			all = append(all, a)
		}
	}
	if drop := len(all) - keep; drop > 0 {
		cc.carry.older += drop
		all = all[drop:]
	}
	cc.carry.unknown = all
}

// earlierUnknown are the key's unknown operations called before t.
func (c *linChecker) earlierUnknown(key int32, t int64) []input {
	all := c.unknown[key]
	n := 0
	for n < len(all) && all[n].call < t {
		n++
	}
	return all[:n]
}

func (c *linChecker) fence(g *greedy, si int) partVerdict {
	seg := &c.segs[si]
	ops := c.keys[seg.key].fence[seg.flo:seg.fhi]
	v := partVerdict{seg: si, fence: true, res: porcupine.Ok}
	if len(ops) == 0 {
		return v
	}
	begin := fenceBegin(seg, ops)
	v.res, v.shown = c.decide(g, &begin, nil, ops, c.label(seg, true))
	return v
}

// run checks every segment on workers goroutines and returns the
// partitions that are not Ok.
func (c *linChecker) run(ctx context.Context, workers int) []partVerdict {
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	var mu sync.Mutex
	var bad []partVerdict
	parallelWorkers(len(c.segs), workers, func() (func(int), func()) {
		var g greedy
		var local []partVerdict
		job := func(si int) {
			if ctx.Err() != nil {
				local = append(local, partVerdict{seg: si, res: porcupine.Unknown})
				return
			}
			for _, v := range []partVerdict{c.lock(&g, si), c.fence(&g, si)} {
				if v.res != porcupine.Ok {
					local = append(local, v)
				}
			}
		}
		finish := func() {
			mu.Lock()
			bad = append(bad, local...)
			mu.Unlock()
		}
		return job, finish
	})
	return bad
}

// finding describes a partition that is not Ok.
func (c *linChecker) finding(v partVerdict, faults faultIndex) Finding {
	seg := &c.segs[v.seg]
	k := c.keys[seg.key]
	ops, what, kind := k.lock[seg.lo:seg.hi], "lock", KindIllegalLock
	if v.fence {
		ops, what, kind = k.fence[seg.flo:seg.fhi], "fence-counter", KindIllegalFence
	}
	f := Finding{Kind: kind, Key: k.name}
	if len(ops) > 0 {
		f.Start = ops[0].call
	}
	for i := range ops {
		if ops[i].ret != never {
			f.End = max(f.End, ops[i].ret)
		}
		if len(f.Ops) < maxOpsPerFinding {
			f.Ops = append(f.Ops, OpRef{Index: int(ops[i].op), Op: c.h.Ops[ops[i].op]})
		}
	}
	f.End = max(f.End, f.Start)
	span := fmt.Sprintf("%d %s operations on %s between %s and %s", len(ops), what, k.name, secs(f.Start), secs(f.End))
	switch {
	case v.res == porcupine.Illegal:
		f.Summary = "no legal order for the " + span
		if len(v.extra) > 0 {
			f.Summary += fmt.Sprintf(", even with the %d earlier unknown operations taking effect late", len(v.extra))
		}
	case v.older > 0:
		f.Kind = KindUndecided
		f.Summary = fmt.Sprintf("no legal order for the %s unless one of %d older unknown operations took effect there", span, v.older)
	default:
		f.Kind = KindTimeout
		f.Summary = "porcupine ran out of time on the " + span
	}
	f.Faults = faults.during(f.Start, f.End)
	return f
}

// maxOpsPerFinding caps the operations listed in one finding.
const maxOpsPerFinding = 40

func secs(ns int64) string { return fmt.Sprintf("%.3fs", float64(ns)/1e9) }

// linPart is what the linearizability check found on some keys, besides
// its findings (kept with every check's); parts merge, and check turns the
// merged part into the Check.
type linPart struct {
	illegal, unknown int
	// segs counts the segments searched; porcupine those the greedy
	// search could not settle.
	segs, porcupine int
	pic             *Picture
	picOps          int // Options.PictureOps
}

// checkLinearizability searches the segments of every key of the part
// together, after the per-key checks: one pool of workers shares them,
// however unevenly they fall on the keys. It runs unless the options skip
// it or give it no time.
func checkLinearizability(x *partCheck, p *part, out *findings) {
	if x.opts.Timeout < 0 || x.opts.skips(Linearizability) {
		return
	}
	m := &model{loss: x.loss, counterLoss: x.counterLoss, tol: x.tol}
	p.lin, p.linRan = linearizability(x.ctx, x.h, x.keys, x.segs, m, x.faults, x.opts, out), true
}

// linearizabilityCheck is the check's outcome for the merged parts: its
// status tells undecided segments from illegal ones, which a count of
// findings cannot.
func linearizabilityCheck(p *part, out *findings, opts Options) Check {
	if !p.linRan {
		return Check{Name: Linearizability, Status: Skipped, Summary: "skipped by options"}
	}
	return p.lin.check(out, opts)
}

// linearizability runs the models over every segment, into out, and keeps
// the picture of what porcupine found (nil when Options.PictureOps < 0).
func linearizability(ctx context.Context, h *history.History, keys []*keyOps, segs []segment, m *model, faults faultIndex, opts Options, out *findings) linPart {
	lp := linPart{segs: len(segs), picOps: opts.PictureOps}
	if len(segs) == 0 {
		return lp
	}
	c := newLinChecker(h, keys, segs, m, time.Now().Add(opts.Timeout))
	bad := c.run(ctx, opts.Workers)
	if opts.PictureOps > 0 && ctx.Err() == nil && (len(bad) > 0 || !opts.failingPictureOnly) {
		lp.pic = c.picture(bad, opts.PictureOps)
	}
	for _, v := range bad {
		if v.res == porcupine.Illegal {
			lp.illegal++
		} else {
			lp.unknown++
		}
	}
	// illegal findings first: they decide the verdict
	for _, want := range []bool{true, false} {
		for _, v := range bad {
			if (v.res == porcupine.Illegal) == want {
				out.add(c.finding(v, faults))
			}
		}
	}
	lp.porcupine = int(c.porcupine.Load())
	return lp
}

// merge adds q to lp. The picture shows failing partitions when some part
// has them (lp's, then q's, up to the operations one page draws), else
// the first part's passing ones.
func (lp *linPart) merge(q *linPart) {
	lp.illegal += q.illegal
	lp.unknown += q.unknown
	lp.segs += q.segs
	lp.porcupine += q.porcupine
	switch {
	case q.pic == nil:
	case lp.pic == nil || !lp.pic.Failing && q.pic.Failing:
		lp.pic = q.pic
	case lp.pic.Failing && q.pic.Failing:
		for _, part := range q.pic.Parts {
			if lp.pic.Ops() < lp.picOps {
				lp.pic.Parts = append(lp.pic.Parts, part)
			}
		}
	}
}

// check is the Check for the merged parts, with their findings fs.
func (lp *linPart) check(fs *findings, opts Options) Check {
	chk := Check{Name: Linearizability, Count: fs.count, Findings: fs.list, Truncated: fs.count > len(fs.list), InWindows: fs.windows}
	switch {
	case lp.segs == 0:
		chk.Status, chk.Summary = Pass, "no lock operations"
	case lp.illegal > 0:
		chk.Status = Fail
		chk.Summary = fmt.Sprintf("%d segments have no legal order", lp.illegal)
		if lp.unknown > 0 {
			chk.Summary += fmt.Sprintf(", %d undecided", lp.unknown)
		}
	case lp.unknown > 0:
		chk.Status = Unknown
		chk.Summary = fmt.Sprintf("%d of %d segments undecided (porcupine timed out after %v or could not rule out late unknown operations)", lp.unknown, lp.segs, opts.Timeout)
	default:
		chk.Status = Pass
		chk.Summary = fmt.Sprintf("%d segments linearizable", lp.segs)
	}
	return chk
}
