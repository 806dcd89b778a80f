package historyjson

import (
	"bytes"
	"unique"

	"github.com/lockcheck/lockcheck/history"
)

// opField is one of Op's JSON fields.
type opField int8

const (
	fUnknown opField = iota
	fClient
	fWorker
	fKey
	fKind
	fToken
	fTTL
	fFence
	fHasFence
	fRead
	fWrote
	fAside
	fOutcome
	fError
	fCall
	fReturn
)

// opFields are the fields' names as Op's tags give them.
var opFields = [...]string{
	fClient: "client", fWorker: "worker", fKey: "key", fKind: "kind", fToken: "token", fTTL: "ttl_ms",
	fFence: "fence", fHasFence: "has_fence", fRead: "read", fWrote: "wrote", fAside: "aside", fOutcome: "outcome",
	fError: "error", fCall: "call", fReturn: "return",
}

// fieldOf is the field a member name (its text) stands for: the exact
// name, or as encoding/json also matches, the name in another case.
func fieldOf(name []byte) opField {
	switch string(name) {
	case "client":
		return fClient
	case "worker":
		return fWorker
	case "key":
		return fKey
	case "kind":
		return fKind
	case "token":
		return fToken
	case "ttl_ms":
		return fTTL
	case "fence":
		return fFence
	case "has_fence":
		return fHasFence
	case "read":
		return fRead
	case "wrote":
		return fWrote
	case "aside":
		return fAside
	case "outcome":
		return fOutcome
	case "error":
		return fError
	case "call":
		return fCall
	case "return":
		return fReturn
	}
	for f, n := range opFields {
		if n != "" && bytes.EqualFold(name, []byte(n)) {
			return opField(f)
		}
	}
	return fUnknown
}

// opDecoder decodes operations. Reading a long history is mostly this, so
// it reads an operation's object straight from the file's buffer, in any
// layout and field order, with what encoding/json would decode into an
// Op (the fuzz tests hold it to that). Texts that repeat from one
// operation to the next (key, kind, outcome) are kept once: a history's
// few keys are not a string per operation.
type opDecoder struct {
	texts map[string]string
}

// maxTexts bounds the decoder's own table of texts; past it, unique
// keeps them.
const maxTexts = 1 << 12

func (d *opDecoder) intern(raw []byte) string {
	if s, ok := d.texts[string(raw)]; ok {
		return s
	}
	s := unique.Make(string(raw)).Value()
	if d.texts == nil {
		d.texts = map[string]string{}
	}
	if len(d.texts) < maxTexts {
		d.texts[s] = s
	}
	return s
}

// op decodes the value at b[p] into op (an object; null gives the zero
// operation, as encoding/json does) and returns the position after it.
// depth is the nesting of the array holding it.
func (d *opDecoder) op(b []byte, p, depth int, op *history.Op) (int, error) {
	*op = history.Op{}
	switch b[p] {
	case '{':
	case 'n':
		return lexLiteral(b, p, "null")
	default:
		if _, err := skipValue(b, p, depth); err != nil {
			return 0, err
		}
		return 0, errAt(p, "want an operation (an object), got %s", kindOf(b[p]))
	}
	if depth+1 > maxDepth {
		return 0, errAt(p, "nested more than %d deep", maxDepth)
	}
	p, err := nextByte(b, p+1)
	if err != nil {
		return 0, err
	}
	if b[p] == '}' {
		return p + 1, nil
	}
	for {
		if b[p] != '"' {
			return 0, want(b, p, "a field name in quotes")
		}
		end, plain, err := lexString(b, p)
		if err != nil {
			return 0, err
		}
		var f opField
		if plain {
			f = fieldOf(b[p+1 : end-1])
		} else {
			f = fieldOf([]byte(text(b, p, end, false)))
		}
		if p, err = colon(b, end); err != nil {
			return 0, err
		}
		if p, err = d.field(b, p, depth+1, f, op); err != nil {
			return 0, err
		}
		if p, err = nextByte(b, p); err != nil {
			return 0, err
		}
		switch b[p] {
		case ',':
			if p, err = nextByte(b, p+1); err != nil {
				return 0, err
			}
		case '}':
			return p + 1, nil
		default:
			return 0, want(b, p, "',' or '}' after a field's value")
		}
	}
}

// field decodes the value at b[p] into op's field f; null leaves the
// field as it is, as encoding/json does.
func (d *opDecoder) field(b []byte, p, depth int, f opField, op *history.Op) (int, error) {
	c := b[p]
	if f == fUnknown || c == 'n' {
		return skipValue(b, p, depth)
	}
	var want string
	switch f {
	case fKey, fKind, fToken, fOutcome, fError:
		if c == '"' {
			return d.textField(b, p, f, op)
		}
		want = "a string"
	case fHasFence, fAside:
		flag := &op.HasFence
		if f == fAside {
			flag = &op.Aside
		}
		switch c {
		case 't':
			*flag = true
			return lexLiteral(b, p, "true")
		case 'f':
			*flag = false
			return lexLiteral(b, p, "false")
		}
		want = "true or false"
	default:
		if c == '-' || '0' <= c && c <= '9' {
			return intField(b, p, f, op)
		}
		want = "an integer"
	}
	if _, err := skipValue(b, p, depth); err != nil {
		return 0, err
	}
	return 0, errAt(p, "field %q: want %s, got %s", opFields[f], want, kindOf(c))
}

// textField decodes the string at b[p] into op's field f. The texts that
// repeat from one operation to the next are interned.
func (d *opDecoder) textField(b []byte, p int, f opField, op *history.Op) (int, error) {
	end, plain, err := lexString(b, p)
	if err != nil {
		return 0, err
	}
	var s string
	switch {
	case !plain:
		s = text(b, p, end, false)
		if f == fKey || f == fKind || f == fOutcome {
			s = unique.Make(s).Value()
		}
	case f == fToken || f == fError:
		s = string(b[p+1 : end-1])
	default:
		s = d.intern(b[p+1 : end-1])
	}
	switch f {
	case fKey:
		op.Key = s
	case fKind:
		op.Kind = history.Kind(s)
	case fToken:
		op.Token = s
	case fOutcome:
		op.Outcome = history.Outcome(s)
	case fError:
		op.Error = s
	}
	return end, nil
}

// intField decodes the number at b[p] into op's integer field f: one
// that is not a whole number of 64 bits is refused.
func intField(b []byte, p int, f opField, op *history.Op) (int, error) {
	end, integer, err := lexNumber(b, p)
	if err != nil {
		return 0, err
	}
	var n int64
	ok := integer
	if ok {
		n, ok = parseInt(b[p:end])
	}
	if !ok {
		return 0, errAt(p, "field %q: want an integer of 64 bits, got %s", opFields[f], b[p:end])
	}
	switch f {
	case fClient:
		op.Client = int(n)
	case fWorker:
		op.Worker = int(n)
	case fTTL:
		op.TTLms = n
	case fFence:
		op.Fence = n
	case fRead:
		op.Read = n
	case fWrote:
		op.Wrote = n
	case fCall:
		op.Call = n
	case fReturn:
		op.Return = n
	}
	return end, nil
}

// decodeOp decodes b, one operation's JSON and nothing else (whitespace
// aside), as encoding/json would.
func decodeOp(b []byte, op *history.Op) error {
	var d opDecoder
	p, err := nextByte(b, 0)
	if err == nil {
		p, err = d.op(b, p, 0, op)
	}
	if err == nil {
		if p = skipSpace(b, p); p < len(b) {
			err = want(b, p, "the end after the operation")
		}
	}
	if err == errMore {
		err = errAt(len(b), "the operation ends early")
	}
	return err
}
