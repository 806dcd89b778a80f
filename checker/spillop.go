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
		flags = 1
	}
	b = append(b, flags)
	for _, s := range [...]string{op.Key, string(op.Kind), op.Token, string(op.Outcome), op.Error} {
		b = binary.AppendUvarint(b, uint64(len(s)))
		b = append(b, s...)
	}
	return b
}

var errSpill = errors.New("cut short")

// readOp decodes what appendOp wrote, returning the rest of b.
func readOp(b []byte, op *history.Op) ([]byte, int32, error) {
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
	op.HasFence, b = b[0] == 1, b[1:]
	var s [5]string
	for j := range s {
		l, k := binary.Uvarint(b)
		if k <= 0 || uint64(len(b)-k) < l {
			return nil, 0, errSpill
		}
		s[j], b = string(b[k:k+int(l)]), b[k+int(l):]
	}
	op.Client, op.Worker, op.TTLms, op.Fence, op.Read, op.Wrote, op.Call, op.Return = int(n[1]), int(n[2]), n[3], n[4], n[5], n[6], n[7], n[8]
	op.Key = unique.Make(s[0]).Value()
	op.Kind = history.Kind(unique.Make(s[1]).Value())
	op.Token = s[2]
	op.Outcome = history.Outcome(unique.Make(s[3]).Value())
	op.Error = s[4]
	return b, int32(n[0]), nil
}
