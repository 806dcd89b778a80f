package main

import (
	"math"

	"github.com/anishathalye/porcupine"

	"github.com/lockcheck/lockcheck/history"
)

// The plain lock model is porcupine alone, as checker's benchmark tests
// measure it (checker/bench_test.go, which keeps its copy test-only): a
// holder and the call + TTL its lease ends at, partitioned by key, no
// segments, no greedy search, none of the lock-specific checks.

type plainState struct {
	holder string
	until  int64
}

const never int64 = math.MaxInt64

func plainModel() porcupine.Model {
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
		Init: func() any { return plainState{} },
		Step: func(s, in, _ any) (bool, any) {
			st, op := s.(plainState), in.(*history.Op)
			lease := plainState{op.Token, op.Call + op.TTLms*1e6}
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
				return st.holder == op.Token, plainState{}
			case op.Outcome == history.Fail: // nil extend, 0 release
				if st.holder == op.Token {
					return op.Return > st.until, plainState{}
				}
				return true, st
			}
			if st.holder == op.Token && op.Kind == history.Release {
				return true, plainState{}
			}
			return true, st
		},
	}
}

// plainOps are the lock operations of h as porcupine takes them: writes
// observations and error replies left out, unknown outcomes returning never.
func plainOps(h *history.History) []porcupine.Operation {
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
