package checker

import (
	"github.com/lockcheck/lockcheck/history"
)

// belief is a hold still being built while a key's ops are walked.
type belief struct {
	at       int // index in the key's holds
	leaseEnd int64
}

// holdsOf computes the beliefs of one key: the intervals in which a
// worker believes it holds the lock, whatever the tokens say. A belief
// starts when an acquire returns OK, and also when an extend returns OK
// after the worker's lease had ended: the client was told it holds again
// (wrongly, when its token is not unique to its acquisition or its extend
// does not check ownership), and a worker acts on what it is told. A
// belief ends at the earliest of a release's call, a failed extend's
// return and its lease end, where the lease ends at the last OK acquire or
// extend call + TTL. An unknown extend does not lengthen it: the client
// cannot know it worked.
//
// Beliefs are told apart by worker (by client when byClient), not by
// token, so two workers handed the same token are two holders. Every
// belief has ended at a chunk's cut; a holder's last acquire is carried.
func holdsOf(h *history.History, k *keyOps, end int64, byClient bool, cc *chunkCtx) []Hold {
	b := &holdWalk{h: h, k: k, cc: cc, byClient: byClient, open: make(map[int]belief), lastAcquire: make(map[int]int)}
	for w, a := range cc.carry.lastAcquire {
		b.lastAcquire[w] = int(a.local)
	}
	for _, i := range k.ops {
		b.step(i)
	}
	for _, o := range b.open {
		hd := &b.holds[o.at]
		hd.End, hd.EndedBy = o.leaseEnd, "lease"
		if o.leaseEnd == never { // no expiry: held until the run stopped
			hd.End, hd.EndedBy = end, "history-end"
		}
		hd.End = max(hd.End, hd.Start)
	}
	if cc.cut != never {
		cc.carry.lastAcquire = make(map[int]*anchor, len(b.lastAcquire))
		for w, i := range b.lastAcquire {
			cc.carry.lastAcquire[w] = cc.anchorOf(h, int32(i))
		}
	}
	return b.holds
}

// holdWalk is holdsOf's walk over one key's operations.
type holdWalk struct {
	h        *history.History
	k        *keyOps
	cc       *chunkCtx
	byClient bool
	holds    []Hold
	open     map[int]belief
	// lastAcquire: holder → index in h.Ops of its last acquire that may
	// have taken the lock
	lastAcquire map[int]int
}

// step takes the key's operation i.
func (b *holdWalk) step(i int32) {
	op := &b.h.Ops[i]
	w := holderOf(op, b.byClient)
	o, isOpen := b.open[w]
	if isOpen && op.Call > o.leaseEnd && op.Kind != history.Write && op.Kind != history.Observe {
		b.closeAt(w, o.leaseEnd, "lease")
		isOpen = false
	}
	switch op.Kind {
	case history.Acquire:
		if op.Outcome != history.Fail {
			b.lastAcquire[w] = int(i)
		}
		if op.Outcome != history.OK {
			return
		}
		if isOpen { // acquired again while it believed it held: the first belief ends here
			b.closeAt(w, op.Call, "release")
		}
		b.start(w, op, int(i), -1)
	case history.Extend:
		switch {
		case op.Outcome == history.OK && isOpen:
			o.leaseEnd = max(o.leaseEnd, leaseEnd(op.Call, op.TTLms))
			b.open[w] = o
		case op.Outcome == history.OK && !op.Aside: // a renewal on the client's own tells its holder nothing
			if a, ok := b.lastAcquire[w]; ok { // told it holds again after its lease ended
				b.start(w, op, a, int(i))
			}
		case op.Outcome == history.Fail && isOpen:
			b.closeAt(w, op.Return, "extend-failed")
		}
	case history.Release:
		if isOpen && sameToken(op.Token, b.holds[o.at].Token) {
			b.closeAt(w, op.Call, "release")
		}
	}
}

// closeAt ends holder w's belief at at (by), or at its lease's end if
// that came first.
func (b *holdWalk) closeAt(w int, at int64, by string) {
	o := b.open[w]
	hd := &b.holds[o.at]
	if o.leaseEnd < at {
		at, by = o.leaseEnd, "lease"
	}
	hd.End, hd.EndedBy = max(at, hd.Start), by
	delete(b.open, w)
}

// start opens a belief of holder w when op returns: the hold of the
// acquire at index acquire, or, told it holds again, of the extend at
// index extend (-1: none).
func (b *holdWalk) start(w int, op *history.Op, acquire, extend int) {
	a := &b.h.Ops[acquire]
	b.holds = append(b.holds, Hold{Key: b.k.name, Client: op.Client, Worker: op.Worker, Token: a.Token,
		Fence: a.Fence, HasFence: a.HasFence, Start: op.Return, Acquire: acquire, Extend: max(extend, 0)})
	if extend >= 0 && b.cc.idx != nil {
		// a chunk's first operation is index 0, which Extend cannot
		// name (0: no extend): named by global index instead
		b.holds[len(b.holds)-1].Extend = globalIndex(b.cc.global(int32(extend)))
	}
	b.open[w] = belief{at: len(b.holds) - 1, leaseEnd: leaseEnd(op.Call, op.TTLms)}
}

// sameToken says whether a release of token rel ends the hold of token
// held: a release recorded by its client on its own (history.Op.Aside)
// may come after its holder has moved on to another acquisition.
// Histories without tokens match releases to the last acquire.
func sameToken(rel, held string) bool {
	return rel == "" || held == "" || rel == held
}

func leaseEnd(call, ttlMs int64) int64 {
	if ttlMs <= 0 {
		return never
	}
	return call + ttlMs*1e6
}
