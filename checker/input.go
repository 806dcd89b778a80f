package checker

import (
	"fmt"

	"github.com/lockcheck/lockcheck/history"
)

// opKind is what an operation does to the models.
type opKind uint8

const (
	kBegin opKind = iota // a segment's first, synthetic operation: sets the state
	kAcquire
	kExtend
	kRelease
	kObserve
	kFence // an acquire as the fence counter sees it: it drew Fence
)

// outcome mirrors history.Outcome in one byte.
type outcome uint8

const (
	outOK outcome = iota
	outFail
	outUnknown
)

// Values of input.pttl for an observation.
const (
	pttlMissing  = -2
	pttlNoExpiry = -1
)

// input is one operation as the models see it. Step needs the operation's
// real-time bounds (a lease's end depends on when it was set), so they travel
// in the input: porcupine itself gives Step no times.
type input struct {
	kind  opKind
	out   outcome
	token int32 // per-key token id; 0 when the op has none
	// ttl is the lease asked for, in ns; 0 means no expiry.
	ttl int64
	// val is an observation's PTTL in ns (or pttlMissing, pttlNoExpiry),
	// or the fence an acquire drew.
	val  int64
	call int64
	ret  int64 // never for an unknown outcome
	// op is the index in History.Ops; -1 for a begin.
	op     int32
	client int32
	// init is the state a begin sets.
	init *state
}

// lockInput converts a history op for the lock model. Operations that
// cannot have touched the lock (a failure with an error reply, a resource
// write, an unanswered observation) are dropped.
func lockInput(op *history.Op, index int, token int32) (input, bool) {
	in := input{token: token, call: op.Call, ret: op.Return, op: int32(index), client: int32(op.Client)}
	switch op.Outcome {
	case history.OK:
		in.out = outOK
	case history.Fail:
		if op.Error != "" {
			return in, false
		}
		in.out = outFail
	case history.Unknown:
		in.out = outUnknown
		in.ret = never
	default:
		return in, false
	}
	switch op.Kind {
	case history.Acquire:
		in.kind = kAcquire
	case history.Extend:
		in.kind = kExtend
	case history.Release:
		in.kind = kRelease
	case history.Observe:
		if in.out != outOK {
			return in, false
		}
		in.kind = kObserve
		in.val = pttlNs(op.Read)
	default:
		return in, false
	}
	if op.TTLms > 0 {
		in.ttl = op.TTLms * 1e6
	}
	return in, true
}

// fenceInput converts an acquire that drew a fence for the fence-counter
// model: only acquires the client knows succeeded report a fence.
func fenceInput(op *history.Op, index int) (input, bool) {
	if op.Kind != history.Acquire || op.Outcome != history.OK || !op.HasFence {
		return input{}, false
	}
	return input{kind: kFence, val: op.Fence, call: op.Call, ret: op.Return, op: int32(index), client: int32(op.Client)}, true
}

func pttlNs(ms int64) int64 {
	if ms < 0 {
		if ms == pttlNoExpiry {
			return pttlNoExpiry
		}
		return pttlMissing
	}
	return ms * 1e6
}

// describe renders an input for porcupine's picture; op is the history
// operation it came from (nil for a begin).
func (in *input) describe(op *history.Op) string {
	out := [...]string{outOK: "ok", outFail: "fail", outUnknown: "unknown"}[in.out]
	tok := ""
	if op != nil {
		tok = op.Token
	}
	if len(tok) > 10 {
		tok = tok[:10] + "…"
	}
	switch in.kind {
	case kBegin:
		return "segment start: " + in.init.describe()
	case kAcquire:
		return fmt.Sprintf("acquire(%s, %s) → %s", tok, ms(in.ttl), out)
	case kExtend:
		return fmt.Sprintf("extend(%s, %s) → %s", tok, ms(in.ttl), out)
	case kRelease:
		return fmt.Sprintf("release(%s) → %s", tok, out)
	case kObserve:
		switch in.val {
		case pttlMissing:
			return "pttl → -2 (no key)"
		case pttlNoExpiry:
			return fmt.Sprintf("pttl(%s) → -1 (no expiry)", tok)
		}
		return fmt.Sprintf("pttl(%s) → %s", tok, ms(in.val))
	case kFence:
		return fmt.Sprintf("acquire(%s) drew fence %d", tok, in.val)
	}
	return "?"
}

func ms(ns int64) string {
	if ns <= 0 {
		return "no expiry"
	}
	return fmt.Sprintf("%gms", float64(ns)/1e6)
}
