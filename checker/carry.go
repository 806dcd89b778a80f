package checker

import (
	"github.com/lockcheck/lockcheck/history"
)

// keyCarry is what the checks of one key hand from one chunk of its
// operations to the next, when RunFile checks a key too long to hold at
// once a chunk at a time. A chunk ends at a cut of the segmenter: no
// operation on the lock is open there and the lock is certainly free, so
// every hold has ended and the lock model starts afresh. What still
// reaches across a cut is small, and listed here: the last acquire of
// each worker (an extend after the cut may say it holds again), the
// highest fence and counter value seen (and the writes still open at the
// cut), the fences handed out (a rollback may hand one out again), the
// stretch a stuck key is in, the fence counter at the cut, and the
// latest unknown operations (which may take effect later). Run checks a
// whole history as one chunk with an empty carry.
type keyCarry struct {
	// chunk counts the chunks checked; refs remember theirs.
	chunk int32
	// maxTTL is the longest lease asked for on the whole key (RunFile's
	// first pass): the segmenter and the stuck check need the key's, not
	// the chunk's.
	maxTTL    int64
	hasMaxTTL bool
	// lastToken is each worker's last acquire's token (prepare: an extend
	// or release naming no token belongs to it).
	lastToken map[int]string
	// lastAcquire is each holder's last acquire that may have taken the
	// lock (holdsOf).
	lastAcquire map[int]*anchor
	fence       fenceCarry
	counter     counterCarry
	stuck       stuckCarry
	// segFence and segLastFence are the fence counter at the cut and the
	// call of the acquire that drew it (segments).
	segFence, segLastFence int64
	segStarted             bool
	// unknown are the latest earlier unknown lock operations, oldest
	// first, with their resolved tokens; older counts those left out.
	unknown []*anchor
	older   int
	// notice are the tenures still open at the cut (lossesOf).
	notice map[int]*tenure
}

// anchor is an operation of an earlier chunk that a check still refers
// to. The next chunk's history gets it appended after its own operations
// (not among the key's operations the checks walk), so the checks read it
// as they read any other operation.
type anchor struct {
	global int32
	local  int32
	op     history.Op
	// token is the resolved token name of an unknown operation (prepare).
	token string
}

// ref is a compact reference to an operation in a map that may outlive
// its chunk (fences handed out, counter values read): the fields the
// check needs, and where the operation is. A finding that names it from
// a later chunk lists it by global index, its operation filled in by
// RunFile once the checks are done (resolveRefs).
type ref struct {
	chunk     int32
	local     int32
	global    int32
	worker    int
	call, ret int64
	value     int64
}

// chunkCtx is what the checks of one key need to know about the chunk
// they are in.
type chunkCtx struct {
	carry *keyCarry
	// idx is the global index of each of the chunk's operations (nil:
	// the history is whole).
	idx []int32
	// cut is where the key's next chunk starts (never: this is its last).
	cut int64
}

func (c *chunkCtx) global(local int32) int32 {
	if c.idx == nil {
		return local
	}
	return c.idx[local]
}

// anchorOf makes an anchor of the chunk's operation i.
func (c *chunkCtx) anchorOf(h *history.History, i int32) *anchor {
	return &anchor{global: c.global(i), local: -1, op: h.Ops[i]}
}

// refOf makes a ref to the chunk's operation i.
func (c *chunkCtx) refOf(h *history.History, i int32, value int64) ref {
	op := &h.Ops[i]
	return ref{chunk: c.carry.chunk, local: i, global: c.global(i), worker: op.Worker, call: op.Call, ret: op.Return, value: value}
}

// opRef lists a ref's operation in a finding: the operation itself when
// it is in this chunk, else its global index for resolveRefs.
func (c *chunkCtx) opRef(h *history.History, r ref) OpRef {
	if r.chunk == c.carry.chunk && r.local >= 0 {
		return OpRef{Index: int(r.local), Op: h.Ops[r.local]}
	}
	return OpRef{Index: globalIndex(r.global)}
}

// globalIndex marks an operation index as global already: renumber turns
// it back, leaving it as it is.
func globalIndex(g int32) int { return -int(g) - 1 }

// anchors lists the carry's anchors, each once.
func (k *keyCarry) anchors() []*anchor {
	var out []*anchor
	seen := map[*anchor]bool{}
	add := func(a *anchor) {
		if a != nil && !seen[a] {
			seen[a] = true
			out = append(out, a)
		}
	}
	for _, a := range k.lastAcquire {
		add(a)
	}
	add(k.fence.bestWrite)
	add(k.fence.bestAcquire)
	for _, a := range k.fence.open {
		add(a)
	}
	for _, a := range k.fence.seen {
		add(a)
	}
	add(k.counter.best)
	for _, a := range k.counter.open {
		add(a)
	}
	for _, a := range k.unknown {
		add(a)
	}
	return out
}

// attach appends the anchors of the keys' carries to h, after its own
// operations, and their global indices to idx.
func attach(h *history.History, idx []int32, carries map[string]*keyCarry) []int32 {
	for _, c := range carries {
		for _, a := range c.anchors() {
			a.local = int32(len(h.Ops))
			h.Ops = append(h.Ops, a.op)
			idx = append(idx, a.global)
		}
	}
	return idx
}
