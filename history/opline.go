package history

import (
	"encoding/json"
	"strconv"
)

// appendOp appends op as encoding/json writes it (the same bytes, so
// files do not depend on which wrote them): every recorded operation is
// encoded once while the workload runs, and encoding/json's reflection
// was a tenth of an op-bound run's CPU. Strings that need escaping go
// through encoding/json.
func appendOp(b []byte, op *Op) []byte {
	b = append(b, `{"client":`...)
	b = strconv.AppendInt(b, int64(op.Client), 10)
	b = append(b, `,"worker":`...)
	b = strconv.AppendInt(b, int64(op.Worker), 10)
	b = appendField(b, `,"key":`, op.Key)
	b = appendField(b, `,"kind":`, string(op.Kind))
	if op.Token != "" {
		b = appendField(b, `,"token":`, op.Token)
	}
	b = appendNonZero(b, `,"ttl_ms":`, op.TTLms)
	b = appendNonZero(b, `,"fence":`, op.Fence)
	if op.HasFence {
		b = append(b, `,"has_fence":true`...)
	}
	b = appendNonZero(b, `,"read":`, op.Read)
	b = appendNonZero(b, `,"wrote":`, op.Wrote)
	if op.Aside {
		b = append(b, `,"aside":true`...)
	}
	b = appendField(b, `,"outcome":`, string(op.Outcome))
	if op.Error != "" {
		b = appendField(b, `,"error":`, op.Error)
	}
	b = append(b, `,"call":`...)
	b = strconv.AppendInt(b, op.Call, 10)
	b = append(b, `,"return":`...)
	b = strconv.AppendInt(b, op.Return, 10)
	return append(b, '}')
}

func appendNonZero(b []byte, name string, v int64) []byte {
	if v == 0 {
		return b
	}
	return strconv.AppendInt(append(b, name...), v, 10)
}

// appendField appends name and s as a JSON string: as is when no byte
// needs escaping (printable ASCII other than the quote, the backslash and
// encoding/json's HTML escapes <, > and &), else as encoding/json does.
func appendField(b []byte, name, s string) []byte {
	b = append(b, name...)
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			q, _ := json.Marshal(s) // a string always marshals
			return append(b, q...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}
