package checker

import (
	"fmt"

	"github.com/anishathalye/porcupine"

	"github.com/lockcheck/lockcheck/history"
)

// porcupineModel wraps the model for porcupine. Inputs are *input; outputs
// are the *history.Op the input came from, used only to describe it.
func (m *model) porcupineModel() porcupine.Model {
	return porcupine.Model{
		Init: func() any { return state{} },
		Step: func(s, in, _ any) (bool, any) {
			ns, ok := m.step(s.(state), in.(*input))
			return ok, ns
		},
		Hash: func(s any) uint64 { return s.(state).hash() },
		DescribeOperation: func(in, out any) string {
			op, _ := out.(*history.Op)
			return in.(*input).describe(op)
		},
		DescribeState: func(s any) string {
			st := s.(state)
			return st.describe()
		},
		DescribeOperationMetadata: func(md any) string {
			if md == nil {
				return ""
			}
			return fmt.Sprint(md)
		},
	}
}

// porcupineOps lays a partition out for porcupine: begin first, then the
// carried and the segment's own operations. label goes in the metadata.
func porcupineOps(h *history.History, begin *input, extra, ops []input, label string) []porcupine.Operation {
	out := make([]porcupine.Operation, 0, 1+len(extra)+len(ops))
	out = append(out, porcupine.Operation{ClientId: int(begin.client), Input: begin, Call: begin.call, Return: begin.ret, Metadata: label})
	for _, part := range [][]input{extra, ops} {
		for i := range part {
			in := &part[i]
			var op *history.Op
			if h != nil {
				op = &h.Ops[in.op]
			}
			out = append(out, porcupine.Operation{ClientId: int(in.client), Input: in, Call: in.call, Output: op, Return: in.ret, Metadata: label})
		}
	}
	return out
}
