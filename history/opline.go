package history

import (
	"bytes"
	"encoding/json"
	"strconv"
	"unicode/utf8"
	"unique"
)

// decodeOp reads one operation from its compact JSON object, as Save and
// the stream write it. Reading a long history is mostly this, so the
// common shape (known fields, strings without escapes, no spaces) is
// parsed by hand, about ten times faster than encoding/json; anything
// else falls back to encoding/json, which decides what is valid. Repeated
// texts (key, kind, outcome) share one copy.
func decodeOp(b []byte, op *Op) error {
	*op = Op{}
	if !fastOp(b, op) {
		*op = Op{}
		if err := json.Unmarshal(b, op); err != nil {
			return err
		}
	}
	op.Key = unique.Make(op.Key).Value()
	op.Kind = Kind(unique.Make(string(op.Kind)).Value())
	op.Outcome = Outcome(unique.Make(string(op.Outcome)).Value())
	return nil
}

// fastOp parses b as {"name":value,...} with the Op's fields only; false
// means "not this shape", never "invalid".
func fastOp(b []byte, op *Op) bool {
	if len(b) < 2 || b[0] != '{' || b[len(b)-1] != '}' {
		return false
	}
	p := 1
	if b[p] == '}' {
		return p == len(b)-1
	}
	for {
		// "name":
		if b[p] != '"' {
			return false
		}
		q := bytes.IndexByte(b[p+1:], '"')
		if q < 0 {
			return false
		}
		name := b[p+1 : p+1+q]
		p += q + 2
		if p >= len(b) || b[p] != ':' {
			return false
		}
		p++
		// value: a string, a number or a bool, up to ',' or the last '}'
		var ok bool
		if p < len(b) && b[p] == '"' {
			var s string
			if s, p, ok = fastString(b, p); !ok || !setString(op, name, s) {
				return false
			}
		} else {
			end := p
			for end < len(b)-1 && b[end] != ',' {
				end++
			}
			if !setScalar(op, name, b[p:end]) {
				return false
			}
			p = end
		}
		if p == len(b)-1 {
			return true
		}
		if b[p] != ',' {
			return false
		}
		p++
		if p >= len(b)-1 {
			return false
		}
	}
}

// fastString reads the string starting at b[p] (a quote) when it has no
// escapes; it returns the text and the index after the closing quote.
func fastString(b []byte, p int) (string, int, bool) {
	q := bytes.IndexByte(b[p+1:], '"')
	if q < 0 {
		return "", 0, false
	}
	raw := b[p+1 : p+1+q]
	if bytes.IndexByte(raw, '\\') >= 0 {
		return "", 0, false
	}
	for _, c := range raw {
		if c < 0x20 {
			return "", 0, false
		}
	}
	if !utf8.Valid(raw) { // encoding/json replaces bad bytes
		return "", 0, false
	}
	return string(raw), p + q + 2, true
}

func setString(op *Op, name []byte, s string) bool {
	switch string(name) {
	case "key":
		op.Key = s
	case "kind":
		op.Kind = Kind(s)
	case "token":
		op.Token = s
	case "outcome":
		op.Outcome = Outcome(s)
	case "error":
		op.Error = s
	default:
		return false
	}
	return true
}

func setScalar(op *Op, name, v []byte) bool {
	if string(name) == "has_fence" {
		switch string(v) {
		case "true":
			op.HasFence = true
		case "false":
			op.HasFence = false
		default:
			return false
		}
		return true
	}
	if !jsonInt(v) {
		return false
	}
	n, err := strconv.ParseInt(string(v), 10, 64)
	if err != nil {
		return false
	}
	switch string(name) {
	case "client":
		op.Client = int(n)
	case "worker":
		op.Worker = int(n)
	case "ttl_ms":
		op.TTLms = n
	case "fence":
		op.Fence = n
	case "read":
		op.Read = n
	case "wrote":
		op.Wrote = n
	case "call":
		op.Call = n
	case "return":
		op.Return = n
	default:
		return false
	}
	return true
}

// jsonInt says whether v is an integer as JSON writes one: an optional
// minus, then 0 or digits without a leading zero.
func jsonInt(v []byte) bool {
	if len(v) > 0 && v[0] == '-' {
		v = v[1:]
	}
	if len(v) == 0 || v[0] == '0' && len(v) > 1 {
		return false
	}
	for _, c := range v {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

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
