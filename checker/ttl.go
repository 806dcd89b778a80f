package checker

import (
	"fmt"

	"github.com/lockcheck/lockcheck/history"
)

// checkLeases is the ttl check on one key: leases never set or not as
// asked; for a Redlock client (Options.Majority) grants after their lease
// ended, else keys stuck long after every lease could end (a Redlock
// acquire refused is no sign the key is held: contenders that split the
// nodes are all refused).
func checkLeases(x *keyCheck, out *findings) {
	noExpiry(x.h, x.k, x.faults, out)
	wrongLease(x.h, x.k, x.loss, x.tol, x.faults, out)
	if x.opts.Majority {
		lateGrants(x.h, x.k, x.tol, x.faults, out)
	} else {
		stuck(x.h, x.k, stuckExcused(x.loss, x.clockLoss, x.k.maxTTL, x.tol), x.tol, x.faults, out, x.cc)
	}
}

// stuckExcused are the instants at which a key still taken is not judged
// stuck: each loss window and the longest lease after it (a failover may
// keep a rolled-back lease), and after a clock fault three leases more: a
// clock that went forward by up to two leases and back again has stretched
// by as much every lease set while it was forward, which the server keeps.
func stuckExcused(loss, clock lossWindows, maxTTL, tol int64) lossWindows {
	return mergeWindows(append(widen(loss, satAdd(maxTTL, tol)), widen(clock, satAdd(3*maxTTL, tol))...))
}

// noExpiry finds operations that may have left the lock key without an
// expiry: an acquire or extend that sent no TTL (TTLms 0: SET without PX,
// which also drops the old TTL) and did or may have taken effect, and an
// observation of PTTL -1.
func noExpiry(h *history.History, k *keyOps, faults faultIndex, out *findings) {
	for _, i := range k.ops {
		op := &h.Ops[i]
		var what string
		switch {
		case (op.Kind == history.Acquire || op.Kind == history.Extend) && op.TTLms <= 0 && op.Outcome != history.Fail:
			what = fmt.Sprintf("%s by worker %d set no expiry (ttl_ms 0): the key never expires", op.Kind, op.Worker)
		case op.Kind == history.Observe && op.Outcome == history.OK && op.Read == -1:
			what = "PTTL -1: the lock key has no expiry"
		default:
			continue
		}
		out.add(Finding{Kind: KindNoExpiry, Key: k.name, Summary: k.name + ": " + what, Start: op.Call, End: op.Return,
			Ops: []OpRef{{Index: int(i), Op: *op}}, Faults: faults.during(op.Call, op.Return)})
	}
}

// lateGrants finds the OK acquires and extends of a Redlock client that
// returned after the lease they asked for had ended (call + TTL +
// tolerance on the harness clock): the client spent the whole lease
// getting its answers, or was frozen before it judged them, and still
// told its caller it holds. Redlock's validity check (TTL - elapsed -
// drift > 0) is what refuses that grant.
func lateGrants(h *history.History, k *keyOps, tol int64, faults faultIndex, out *findings) {
	for _, i := range k.ops {
		op := &h.Ops[i]
		if (op.Kind != history.Acquire && op.Kind != history.Extend) || op.Outcome != history.OK || op.TTLms <= 0 {
			continue
		}
		end := op.Call + op.TTLms*1e6
		if op.Return <= end+tol {
			continue
		}
		out.add(Finding{Kind: KindLateGrant, Key: k.name,
			Summary: fmt.Sprintf("%s: worker %d's %s said OK %.1f ms after the %d ms lease it asked for had ended: no validity was left",
				k.name, op.Worker, op.Kind, float64(op.Return-end)/1e6, op.TTLms),
			Start: op.Call, End: op.Return, Ops: []OpRef{{Index: int(i), Op: *op}}, Faults: faults.during(op.Call, op.Return)})
	}
}

// stuck finds a key that stays taken long after every lease on it must
// have ended: an acquire that found the key held (or an observation that
// found it present) later than TTL + tolerance after the latest lease any
// acquire or extend called up to then could have set. An unknown acquire is
// assumed to have taken effect before the harness gave up on it, unless a
// read found its token later with time left (its command landed late). Instants
// in a loss window (or within the longest lease after one) are not judged:
// a failover or clock fault may keep a rolled-back lease. One finding per
// stretch, until the key is acquired again.
func stuck(h *history.History, k *keyOps, noJudge lossWindows, tol int64, faults faultIndex, out *findings, cc *chunkCtx) {
	sc := &cc.carry.stuck
	n := len(k.ops)
	calls := make([]int64, n)
	latest := make([]int64, n) // prefix max of possible lease ends
	run := int64(-1 << 62)
	if sc.started {
		run = sc.run
	}
	late := unknownTokens(h, k)
	for j, i := range k.ops {
		op := &h.Ops[i]
		calls[j] = op.Call
		if (op.Kind == history.Acquire || op.Kind == history.Extend) && op.Outcome != history.Fail {
			if op.TTLms <= 0 {
				run = never
			} else {
				run = max(run, satAdd(op.Return, op.TTLms*1e6))
			}
		}
		// A call of unknown outcome may take effect after its client gave
		// up (its command still on its way, or a starved server): a read
		// that found its token with time left dates that lease.
		if op.Kind == history.Observe && op.Outcome == history.OK && op.Read > 0 && late[op.Token] {
			run = max(run, satAdd(op.Return, op.Read*1e6))
		}
		latest[j] = run
	}
	cur := sc.cur
	flush := func() {
		if cur != nil {
			out.add(*cur)
			cur = nil
		}
	}
	for j, i := range k.ops {
		op := &h.Ops[i]
		held := op.Kind == history.Acquire && op.Outcome == history.Fail && op.Error == ""
		held = held || (op.Kind == history.Observe && op.Outcome == history.OK && op.Read != -2)
		if op.Kind == history.Acquire && op.Outcome == history.OK {
			flush()
		}
		if !held {
			continue
		}
		// leases set by anything called up to this op's return: the ops
		// called while it was open are few, so walk to them
		last := j
		for last+1 < n && calls[last+1] <= op.Return {
			last++
		}
		end := latest[last]
		if end == never || op.Call <= satAdd(end, tol) || noJudge.meets(op.Call, op.Return) {
			continue
		}
		if cur == nil {
			cur = &Finding{Kind: KindStuck, Key: k.name, Start: end}
		}
		cur.End = op.Return
		if len(cur.Ops) < maxOpsPerFinding {
			cur.Ops = append(cur.Ops, OpRef{Index: int(i), Op: *op})
		}
		cur.Summary = fmt.Sprintf("%s: still taken %.3f s after the last lease could have ended (%d attempts)",
			k.name, float64(cur.End-cur.Start)/1e9, len(cur.Ops))
		cur.Faults = faults.during(cur.Start, cur.End)
	}
	if cc.cut == never {
		flush()
		return
	}
	// the stretch goes on into the next chunk: its operations by global index
	sc.run, sc.started, sc.cur = run, true, cur
	if cur != nil {
		for j := range cur.Ops {
			if r := &cur.Ops[j]; r.Index >= 0 {
				r.Index = globalIndex(cc.global(int32(r.Index)))
			}
		}
	}
}

// unknownTokens are the tokens of k's acquires and extends of unknown
// outcome, whose leases may have been set after they returned.
func unknownTokens(h *history.History, k *keyOps) map[string]bool {
	late := map[string]bool{}
	for _, i := range k.ops {
		op := &h.Ops[i]
		if (op.Kind == history.Acquire || op.Kind == history.Extend) && op.Outcome == history.Unknown && op.Token != "" {
			late[op.Token] = true
		}
	}
	return late
}

// stuckCarry is what stuck hands to a key's next chunk: the latest lease
// end any operation could have set, and the stretch it is in.
type stuckCarry struct {
	run     int64
	started bool
	cur     *Finding
}
