package checker

import (
	"encoding/binary"
	"errors"
	"unique"

	"github.com/lockcheck/lockcheck/history"
)

// appendOp encodes an operation and its index for RunFile's spill files:
// varints and length-prefixed texts, a few times faster to read back than
// JSON.
func appendOp(b []byte, i int32, op *history.Op) []byte {
	b = binary.AppendVarint(b, int64(i))
	for _, n := range [...]int64{int64(op.Client), int64(op.Worker), op.TTLms, op.Fence, op.Read, op.Wrote, op.Call, op.Return} {
		b = binary.AppendVarint(b, n)
	}
	var flags byte
	if op.HasFence {
		flags |= 1
	}
	if op.Aside {
		flags |= 2
	}
	b = append(b, flags)
	for _, s := range [...]string{op.Key, string(op.Kind), op.Token, string(op.Outcome), op.Error} {
		b = binary.AppendUvarint(b, uint64(len(s)))
		b = append(b, s...)
	}
	return b
}

var errSpill = errors.New("cut short")

// readOp decodes what appendOp wrote, returning the rest of b. The texts
// that repeat (key, kind, outcome) come from t, made once each; a nil t
// makes them with unique alone.
func readOp(b []byte, op *history.Op, t texts) ([]byte, int32, error) {
	var n [9]int64
	for j := range n {
		v, k := binary.Varint(b)
		if k <= 0 {
			return nil, 0, errSpill
		}
		n[j], b = v, b[k:]
	}
	if len(b) == 0 {
		return nil, 0, errSpill
	}
	op.HasFence, op.Aside, b = b[0]&1 != 0, b[0]&2 != 0, b[1:]
	var s [5][]byte
	for j := range s {
		l, k := binary.Uvarint(b)
		if k <= 0 || uint64(len(b)-k) < l {
			return nil, 0, errSpill
		}
		s[j], b = b[k:k+int(l)], b[k+int(l):]
	}
	op.Client, op.Worker, op.TTLms, op.Fence, op.Read, op.Wrote, op.Call, op.Return = int(n[1]), int(n[2]), n[3], n[4], n[5], n[6], n[7], n[8]
	op.Key = t.of(s[0])
	op.Kind = history.Kind(t.of(s[1]))
	op.Token = string(s[2])
	op.Outcome = history.Outcome(t.of(s[3]))
	op.Error = string(s[4])
	return b, int32(n[0]), nil
}

// texts keeps each text readOp met once, up to maxTexts of them: reading
// a spilled operation made a string of its key, kind and outcome only for
// unique to find the one it had.
type texts map[string]string

const maxTexts = 1 << 12

func (t texts) of(b []byte) string {
	if s, ok := t[string(b)]; ok {
		return s
	}
	s := unique.Make(string(b)).Value()
	if t != nil && len(t) < maxTexts {
		t[s] = s
	}
	return s
}
