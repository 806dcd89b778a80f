package checker

import (
	"github.com/anishathalye/porcupine"

	"github.com/lockcheck/lockcheck/history"
)

// The baseline is what lockcheck's checker is measured against: porcupine
// alone with a lock model written the obvious way, partitioned by key
// only. The checker's benchmarks and bench/ use it; no check does.

// baselineState is the state of a lock model written the obvious way: a
// holder and the call + TTL its lease ends at, nothing else.
type baselineState struct {
	holder string
	until  int64
}

// BaselineModel is porcupine alone: a plain lock model over history
// operations, partitioned by key, no segments, no greedy search, none of
// the lock-specific checks. It is the baseline DESIGN.md measured.
func BaselineModel() porcupine.Model {
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
		Init: func() any { return baselineState{} },
		Step: func(s, in, _ any) (bool, any) {
			st, op := s.(baselineState), in.(*history.Op)
			lease := baselineState{op.Token, op.Call + op.TTLms*1e6}
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
				return st.holder == op.Token, baselineState{}
			case op.Outcome == history.Fail: // nil extend, 0 release
				if st.holder == op.Token {
					return op.Return > st.until, baselineState{}
				}
				return true, st
			}
			if st.holder == op.Token && op.Kind == history.Release {
				return true, baselineState{}
			}
			return true, st
		},
	}
}

func BaselineOps(h *history.History) []porcupine.Operation {
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
