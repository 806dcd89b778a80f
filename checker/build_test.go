package checker

import (
	"github.com/lockcheck/lockcheck/history"
)

// Helpers to write histories by hand: times in milliseconds, one worker per
// letter, key "lock:{a}" unless said otherwise.

const defaultTTLms = 1000

// o is a lock operation by worker w with token tok on the default key.
func o(w int, kind history.Kind, tok string, out history.Outcome, callMs, retMs float64) history.Op {
	op := history.Op{Client: w, Worker: w, Key: "lock:{a}", Kind: kind, Token: tok, Outcome: out,
		Call: int64(callMs * 1e6), Return: int64(retMs * 1e6)}
	if kind == history.Acquire || kind == history.Extend {
		op.TTLms = defaultTTLms
	}
	return op
}

func acq(w int, tok string, out history.Outcome, c, r float64) history.Op {
	return o(w, history.Acquire, tok, out, c, r)
}
func ext(w int, tok string, out history.Outcome, c, r float64) history.Op {
	return o(w, history.Extend, tok, out, c, r)
}
func rel(w int, tok string, out history.Outcome, c, r float64) history.Op {
	return o(w, history.Release, tok, out, c, r)
}

// write is a fenced write to the resource.
func write(w int, tok string, fence int64, out history.Outcome, c, r float64) history.Op {
	op := o(w, history.Write, tok, out, c, r)
	op.Fence, op.HasFence = fence, true
	return op
}

// incr is an unfenced read-modify-write of the resource counter.
func incr(w int, read int64, out history.Outcome, c, r float64) history.Op {
	op := o(w, history.Write, "", out, c, r)
	op.Read, op.Wrote = read, read+1
	return op
}

// observe is the scenario's PTTL on the key.
func observe(pttl int64, tok string, c, r float64) history.Op {
	op := o(0, history.Observe, tok, history.OK, c, r)
	op.Read = pttl
	return op
}

func ttl(op history.Op, ms int64) history.Op     { op.TTLms = ms; return op }
func fenced(op history.Op, f int64) history.Op   { op.Fence, op.HasFence = f, true; return op }
func onKey(op history.Op, key string) history.Op { op.Key = key; return op }
func client(op history.Op, c int) history.Op     { op.Client = c; return op }
func failErr(op history.Op, e string) history.Op { op.Outcome, op.Error = history.Fail, e; return op }

func fault(name string, startMs, endMs float64) history.Fault {
	return history.Fault{Name: name, Start: int64(startMs * 1e6), End: int64(endMs * 1e6)}
}

func hist(ops ...history.Op) *history.History {
	h := &history.History{Ops: ops}
	h.Sort()
	return h
}

const (
	ok      = history.OK
	fail    = history.Fail
	unknown = history.Unknown
)
