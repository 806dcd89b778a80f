// Package baseline is what lockcheck's checker is measured against:
// porcupine alone with a lock model written the obvious way, partitioned by
// key only. The checker's benchmarks and bench/ use it; no check does, so
// it is not part of the checker's API.
package baseline

import (
	"math"

	"github.com/anishathalye/porcupine"

	"github.com/lockcheck/lockcheck/history"
)

// never is the return of an operation whose outcome is unknown: it may
// take effect at any time after its call.
const never int64 = math.MaxInt64

// state is the state of a lock model written the obvious way: a
// holder and the call + TTL its lease ends at, nothing else.
type state struct {
	holder string
	until  int64
}

// Model is porcupine alone: a plain lock model over history
// operations, partitioned by key, no segments, no greedy search, none of
// the lock-specific checks. It is the baseline the checker was first measured against.
func Model() porcupine.Model {
	return porcupine.Model{
		Partition: func(ops []porcupine.Operation) [][]porcupine.Operation {
			byKey := map[string][]porcupine.Operation{}
			var keys []string
			for _, op := range ops {
				k := op.Input.(*history.Op).Key
				if _, ok := byKey[k]; !ok {
					keys = append(keys, k)
				}
				byKey[k] = append(byKey[k], op)
			}
			out := make([][]porcupine.Operation, 0, len(keys))
			for _, k := range keys {
				out = append(out, byKey[k])
			}
			return out
		},
		Init: func() any { return state{} },
		Step: func(s, in, _ any) (bool, any) {
			st, op := s.(state), in.(*history.Op)
			lease := state{op.Token, op.Call + op.TTLms*1e6}
			gone := st.holder == "" || op.Return > st.until
			switch {
			case op.Kind == history.Acquire && op.Outcome == history.OK:
				return gone, lease
			case op.Kind == history.Acquire && op.Outcome == history.Fail:
				return st.holder != "", st
			case op.Kind == history.Acquire: // unknown
				if st.holder == "" {
					return true, lease
				}
				return true, st
			case op.Outcome == history.OK && op.Kind == history.Extend:
				return st.holder == op.Token, lease
			case op.Outcome == history.OK: // release
				return st.holder == op.Token, state{}
			case op.Outcome == history.Fail: // nil extend, 0 release
				if st.holder == op.Token {
					return op.Return > st.until, state{}
				}
				return true, st
			}
			if st.holder == op.Token && op.Kind == history.Release {
				return true, state{}
			}
			return true, st
		},
	}
}

// Ops are the history's lock operations as porcupine's: resource writes,
// observations and refused commands (a fail with an error) are left out,
// and an operation whose outcome is unknown never returns.
func Ops(h *history.History) []porcupine.Operation {
	var ops []porcupine.Operation
	for i := range h.Ops {
		op := &h.Ops[i]
		if op.Kind == history.Write || op.Kind == history.Observe || (op.Outcome == history.Fail && op.Error != "") {
			continue
		}
		ret := op.Return
		if op.Outcome == history.Unknown {
			ret = never
		}
		ops = append(ops, porcupine.Operation{ClientId: op.Client, Input: op, Call: op.Call, Return: ret})
	}
	return ops
}
