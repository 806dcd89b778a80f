package checker

import (
	"container/heap"
	"math"

	"github.com/lockcheck/lockcheck/history"
)

// segment is a stretch of one key's history that can be checked on its own:
// at its start no operation is open and the lock is certainly free, so the
// state there is known without looking back.
type segment struct {
	key int32
	// lock and fence ranges in the key's inputs.
	lo, hi   int32
	flo, fhi int32
	// fence counter at the start, and whether a fault may have rolled it
	// back since it was handed out.
	fence     int64
	fenceLost bool
}

// tokenLease is a heap entry: the token may hold the key until end.
type tokenLease struct {
	end int64
	tok int32
}

type leaseHeap []tokenLease

func (h leaseHeap) Len() int           { return len(h) }
func (h leaseHeap) Less(i, j int) bool { return h[i].end < h[j].end }
func (h leaseHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *leaseHeap) Push(x any)        { *h = append(*h, x.(tokenLease)) }
func (h *leaseHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// segmenter walks one key's lock inputs in call order and decides where a
// cut is safe. A cut at instant C needs:
//   - every operation called before C returned before C (unknown outcomes
//     aside: see below);
//   - every token that acquired the key before C was released, or failed an
//     extend or release called after its acquire returned, or its lease
//     certainly ended before C (latest return + TTL + tolerance of its
//     acquire and extends; an unknown extend may add a TTL);
//   - no unknown acquire may still hold the key, assuming it took effect
//     before the harness gave up on it (a command delivered later than
//     that is handled by carrying the earlier unknown operations into a
//     later segment when it fails without them: see linChecker.lock);
//   - no observation saw the key with PTTL left that may reach past C;
//   - C is not in a loss window, nor within the longest lease after one: a
//     rolled-back key comes back with its old deadline.
type segmenter struct {
	h     *history.History
	k     *keyOps
	tol   int64
	noCut lossWindows

	maxRet    int64
	liveUntil int64
	leases    leaseHeap
	current   map[int32]int64 // token → latest possible lease end; deleted when dead
	acquired  map[int32]int64 // token → return of its OK acquire
}

func (s *segmenter) latest(ret, ttl int64) int64 {
	if ttl <= 0 || ret == never {
		return never
	}
	return satAdd(ret, ttl+s.tol)
}

// free says whether the key is certainly free with nothing open at c.
func (s *segmenter) free(c int64) bool {
	if s.maxRet >= c || s.liveUntil >= c || s.noCut.meets(c, c) {
		return false
	}
	for len(s.leases) > 0 {
		top := s.leases[0]
		end, live := s.current[top.tok]
		if live && end == top.end && end >= c {
			return false
		}
		heap.Pop(&s.leases)
		if live && end == top.end {
			delete(s.current, top.tok)
		}
	}
	return true
}

func (s *segmenter) setLease(tok int32, end int64) {
	s.current[tok] = end
	heap.Push(&s.leases, tokenLease{end, tok})
}

// kill marks a token's lease over: a release, or a nil extend or a 0
// release, that certainly came after the acquire (a concurrent one may have
// taken effect before it). IFEQ and DELIFEQ cannot bring a token back.
func (s *segmenter) kill(in *input) {
	if at, ok := s.acquired[in.token]; ok && in.call > at {
		delete(s.current, in.token)
	}
}

// add accounts for one operation once it is behind the cut candidate.
func (s *segmenter) add(in *input) {
	op := &s.h.Ops[in.op]
	if in.out != outUnknown {
		s.maxRet = max(s.maxRet, in.ret)
	}
	switch in.kind {
	case kAcquire:
		switch in.out {
		case outOK:
			s.setLease(in.token, max(s.current[in.token], s.latest(in.ret, in.ttl)))
			s.acquired[in.token] = in.ret
		case outUnknown:
			s.liveUntil = max(s.liveUntil, s.latest(op.Return, in.ttl))
		}
	case kExtend:
		end, live := s.current[in.token]
		if !live {
			// The token's acquire had an unknown outcome (or the token
			// is dead and this changes nothing).
			switch in.out {
			case outOK:
				s.setLease(in.token, s.latest(in.ret, in.ttl))
			case outUnknown:
				s.liveUntil = max(s.liveUntil, s.latest(op.Return, in.ttl))
			}
			return
		}
		switch in.out {
		case outOK:
			s.setLease(in.token, max(end, s.latest(in.ret, in.ttl)))
		case outFail:
			s.kill(in)
		case outUnknown:
			if in.ttl <= 0 {
				s.setLease(in.token, never)
			} else {
				s.setLease(in.token, satAdd(end, in.ttl+s.tol))
			}
		}
	case kRelease:
		if in.out != outUnknown {
			s.kill(in)
		}
	case kObserve:
		switch in.val {
		case pttlMissing:
		case pttlNoExpiry:
			s.liveUntil = never
		default:
			s.liveUntil = max(s.liveUntil, satAdd(in.ret, in.val+s.tol))
		}
	}
}

// segments cuts key k (index ki) into independent segments. A chunk of
// the key starts at a cut, with the fence counter there from cc's carry.
func segments(h *history.History, k *keyOps, ki int, loss, counterLoss lossWindows, tol int64, cc *chunkCtx) []segment {
	carry := cc.carry
	if !carry.segStarted {
		carry.segFence, carry.segLastFence, carry.segStarted = math.MinInt64, math.MinInt64, true
	}
	if cc.cut != never {
		// every fence input of the chunk was called before the next
		// chunk's cut
		defer func() {
			for _, in := range k.fence {
				if in.val > carry.segFence {
					carry.segFence, carry.segLastFence = in.val, in.call
				}
			}
		}()
	}
	if len(k.lock) == 0 && len(k.fence) == 0 {
		return nil
	}
	s := &segmenter{h: h, k: k, tol: tol, maxRet: math.MinInt64, liveUntil: math.MinInt64, current: make(map[int32]int64), acquired: make(map[int32]int64)}
	s.noCut = widen(loss, satAdd(k.maxTTL, tol))
	var out []segment
	fi := 0                         // next fence input
	lastFence := carry.segLastFence // call of the acquire that drew cur.fence
	fence := carry.segFence
	cur := segment{key: int32(ki), fence: fence}
	if fence != math.MinInt64 {
		cur.fenceLost = counterLoss.meets(lastFence, firstCall(k))
	}
	for i := range k.lock {
		in := &k.lock[i]
		if i > int(cur.lo) && s.free(in.call) {
			// fence inputs are OK acquires, all behind the cut
			for fi < len(k.fence) && k.fence[fi].call < in.call {
				if k.fence[fi].val > fence {
					fence, lastFence = k.fence[fi].val, k.fence[fi].call
				}
				fi++
			}
			cur.hi, cur.fhi = int32(i), int32(fi)
			out = append(out, cur)
			cur = segment{key: int32(ki), lo: int32(i), flo: int32(fi), fence: fence,
				fenceLost: fence != math.MinInt64 && counterLoss.meets(lastFence, in.call)}
			// Tokens acquired before a cut are dead: forgetting them keeps
			// the segmenter's memory to a segment's (a late release of one
			// then kills nothing, and an extend that revived one keeps it
			// until its lease certainly ended: a later cut, never a wrong
			// one).
			clear(s.acquired)
		}
		s.add(in)
	}
	cur.hi, cur.fhi = int32(len(k.lock)), int32(len(k.fence))
	return append(out, cur)
}

// firstCall is the call of the key's first lock or fence input.
func firstCall(k *keyOps) int64 {
	c := int64(math.MaxInt64)
	if len(k.lock) > 0 {
		c = k.lock[0].call
	}
	if len(k.fence) > 0 {
		c = min(c, k.fence[0].call)
	}
	return c
}
