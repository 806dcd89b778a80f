package checker

import (
	"fmt"
	"math"
)

// state is the state of one partition: a lock key, or a key's fence
// counter. It is a comparable value so that porcupine's cache can use ==.
//
// A lease ends lazily: a key held with lease L may be found free by any
// operation that linearizes after L, and may equally be found still held; the
// choice is made by the operation that observes it. That keeps Step
// deterministic while allowing every expiry time a correct server may pick.
type state struct {
	started bool
	// fenced marks a fence-counter partition.
	fenced bool
	// lost: a fault may have lost or rolled back the key (a failover, a
	// restart): nothing is known until an operation establishes a state.
	lost   bool
	holder int32 // token id; 0 when free
	// lease is the earliest instant the lease may end, latest the instant
	// by which it has certainly ended (never: no expiry, or set by an
	// operation that may take effect at any time).
	lease  int64
	latest int64
	// now is the earliest instant the last operation can have taken
	// effect: linearization points only move forward.
	now int64
	// fence is the last fence handed out.
	fence int64
	// floor is the instant a partition starts from: a loss before it
	// does not count (the cut rule saw every lease of that time end), even
	// when unknown operations carried in from earlier start it sooner.
	floor int64
}

// model holds what Step needs besides the state: when a key may be lost and
// how far the server's expiry may run ahead of the harness clock.
type model struct {
	loss lossWindows
	// counterLoss replaces loss for the fence counter: a clock fault may
	// lose a lease but not roll a counter back.
	counterLoss lossWindows
	tol         int64
}

// leaseFrom is the earliest end of a lease set at p with ttl (0: none).
func (m *model) leaseFrom(p, ttl int64) int64 {
	if ttl <= 0 {
		return never
	}
	return p + ttl - m.tol
}

// latestFrom is the latest end of a lease set by an operation that
// returned at ret: the server set it at the latest then.
func (m *model) latestFrom(ret, ttl int64) int64 {
	if ttl <= 0 || ret == never {
		return never
	}
	return satAdd(ret, ttl+m.tol)
}

// step applies one operation. It is a pure function of its arguments. Each
// operation takes effect at the earliest instant p in [call, ret] that the
// transition allows: an earlier point never makes a later operation
// impossible, so trying only that point loses no legal order.
func (m *model) step(s state, in *input) (state, bool) {
	if in.kind == kBegin {
		if s.started {
			return s, false
		}
		return *in.init, true
	}
	if !s.started {
		return s, false
	}
	ns, ok := m.apply(s, in)
	ns.floor = s.floor
	return ns, ok
}

func (m *model) apply(s state, in *input) (state, bool) {
	p := max(s.now, in.call)
	if p > in.ret {
		return s, false
	}
	// A loss between the previous operation and this one. Known outcomes
	// see any loss their interval meets (a loss window starting inside the
	// interval counts); an unknown one only a loss before its point, or it
	// could spread a later fault's effect backwards.
	to := in.ret
	if in.out == outUnknown {
		to = p
	}
	loss := m.loss
	if in.kind == kFence {
		loss = m.counterLoss
	}
	if loss.meets(max(s.now, s.floor), to) {
		s.lost, s.holder, s.lease, s.latest = true, 0, 0, 0
	}
	if !s.lost && s.holder != 0 && p > s.latest {
		s.holder, s.lease, s.latest = 0, 0, 0 // certainly expired
	}
	switch in.kind {
	case kAcquire:
		return m.acquire(s, in, p)
	case kExtend:
		return m.extend(s, in, p)
	case kRelease:
		return m.release(s, in, p)
	case kObserve:
		return m.observe(s, in, p)
	case kFence:
		return m.fence(s, in, p)
	}
	return s, false
}

// expire makes the lease over before the operation: the operation must
// linearize after the lease's earliest end.
func (m *model) expire(s state, p, ret int64) (int64, bool) {
	if s.lease == never {
		return p, false
	}
	p = max(p, s.lease+1)
	return p, p <= ret
}

func (m *model) held(tok int32, p, ttl, latest int64) state {
	return state{started: true, holder: tok, lease: m.leaseFrom(p, ttl), latest: latest, now: p}
}

func free(p int64) state { return state{started: true, now: p} }

func (m *model) acquire(s state, in *input, p int64) (state, bool) {
	switch in.out {
	case outOK:
		if !s.lost && s.holder != 0 {
			var ok bool
			if p, ok = m.expire(s, p, in.ret); !ok {
				return s, false
			}
		}
		return m.held(in.token, p, in.ttl, m.latestFrom(in.ret, in.ttl)), true
	case outFail: // NX found a key
		if !s.lost && s.holder == 0 {
			return s, false
		}
		s.now = p
		if !s.lost {
			s.lease = max(s.lease, p) // alive at p: it cannot have ended before
		}
		return s, true
	default:
		// Unknown: took effect if it could. "It did not" needs no state:
		// porcupine may linearize it last, where it changes nothing.
		if s.lost {
			s.now = p
			return s, true
		}
		if s.holder != 0 {
			if s.lease == never {
				s.now = p
				return s, true
			}
			p = max(p, s.lease+1)
		}
		return m.held(in.token, p, in.ttl, never), true
	}
}

func (m *model) extend(s state, in *input, p int64) (state, bool) {
	switch in.out {
	case outOK:
		if !s.lost && s.holder != in.token {
			return s, false
		}
		return m.held(in.token, p, in.ttl, m.latestFrom(in.ret, in.ttl)), true
	case outFail:
		return m.notHeldBy(s, in, p)
	default:
		if !s.lost && s.holder == in.token {
			// it took effect while the key still held the token: by
			// s.latest at the latest
			latest := never
			if in.ttl > 0 {
				latest = satAdd(s.latest, in.ttl+m.tol)
			}
			return m.held(in.token, p, in.ttl, latest), true
		}
		s.now = p
		return s, true
	}
}

func (m *model) release(s state, in *input, p int64) (state, bool) {
	switch in.out {
	case outOK:
		if !s.lost && s.holder != in.token {
			return s, false
		}
		return free(p), true
	case outFail:
		return m.notHeldBy(s, in, p)
	default:
		if !s.lost && s.holder == in.token {
			return free(p), true
		}
		s.now = p
		return s, true
	}
}

// notHeldBy is a nil extend or a 0 release: the key did not hold the token.
func (m *model) notHeldBy(s state, in *input, p int64) (state, bool) {
	if !s.lost && s.holder == in.token {
		var ok bool
		if p, ok = m.expire(s, p, in.ret); !ok {
			return s, false
		}
		return free(p), true
	}
	s.now = p
	return s, true
}

// observe is the scenario's PTTL (and GET) on the key.
func (m *model) observe(s state, in *input, p int64) (state, bool) {
	if in.val == pttlMissing {
		if s.lost || s.holder == 0 {
			return free(p), true
		}
		var ok bool
		if p, ok = m.expire(s, p, in.ret); !ok {
			return s, false
		}
		return free(p), true
	}
	// Present at p with PTTL left: it ends no earlier than p and
	// p + PTTL - tolerance, no later than return + PTTL + tolerance.
	lease, latest := never, never
	if in.val != pttlNoExpiry {
		lease = max(p, m.leaseFrom(p, max(in.val, 1)))
		latest = m.latestFrom(in.ret, max(in.val, 1))
	}
	if s.lost {
		if in.token == 0 {
			s.now = p
			return s, true
		}
		return state{started: true, holder: in.token, lease: lease, latest: latest, now: p}, true
	}
	if s.holder == 0 || (in.token != 0 && in.token != s.holder) {
		return s, false
	}
	if (in.val == pttlNoExpiry) != (s.lease == never) {
		return s, false
	}
	s.now, s.lease, s.latest = p, max(s.lease, lease), min(s.latest, latest)
	return s, s.lease <= s.latest
}

// fence is the fence counter: INCR in the acquire's transaction, so every
// fence a client learns is above every fence handed out before it; failed
// and unknown acquires may also have counted, which leaves gaps.
func (m *model) fence(s state, in *input, p int64) (state, bool) {
	if !s.lost && in.val <= s.fence {
		return s, false
	}
	return state{started: true, fenced: true, fence: in.val, now: p}, true
}

// hash mixes a state's fields for porcupine's cache.
func (s state) hash() uint64 {
	h := uint64(s.holder)*0x9E3779B97F4A7C15 ^ uint64(s.lease)*0xC2B2AE3D27D4EB4F ^
		uint64(s.now)*0x165667B19E3779F9 ^ uint64(s.fence)*0x27D4EB2F165667C5 ^ uint64(s.latest)*0x85EBCA77C2B2AE63
	if s.lost {
		h ^= 1
	}
	if s.fenced {
		h ^= 2
	}
	return h
}

// describe renders a state for porcupine's picture.
func (s *state) describe() string {
	switch {
	case s.fenced && s.lost:
		return "fence counter unknown after a fault"
	case s.fenced && s.fence == math.MinInt64:
		return "no fence yet"
	case s.fenced:
		return fmt.Sprintf("last fence %d", s.fence)
	case s.lost:
		return "unknown: the key may have been lost in a fault"
	case s.holder == 0:
		return "free"
	case s.lease == never:
		return fmt.Sprintf("held by #%d, no expiry", s.holder)
	}
	if s.latest == never {
		return fmt.Sprintf("held by #%d, may expire after %.3fs", s.holder, float64(s.lease)/1e9)
	}
	return fmt.Sprintf("held by #%d, expires between %.3fs and %.3fs", s.holder, float64(s.lease)/1e9, float64(s.latest)/1e9)
}
