package historyjson

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"unicode/utf8"
)

// The lexer reads JSON values from a buffer that may hold only the start
// of the file: every function here takes the buffer and a position and
// returns the position after what it read, or errMore when the buffer
// ends inside it (the Reader then reads more of the file and runs it
// again from the same start). It accepts exactly what encoding/json
// accepts, so that a history valid for one is valid for the other.

// errMore says the buffer ended inside the value being read.
var errMore = errors.New("more input needed")

// maxDepth is encoding/json's nesting limit: deeper arrays and objects
// are refused.
const maxDepth = 10000

// jsonError is a malformed value: at is the position in the buffer of
// the byte at fault; the Reader turns it into the file's line and column.
type jsonError struct {
	at  int
	msg string
}

func (e *jsonError) Error() string { return e.msg }

func errAt(at int, format string, args ...any) error {
	return &jsonError{at: at, msg: fmt.Sprintf(format, args...)}
}

// want is the error of an unexpected byte where what was expected.
func want(b []byte, at int, what string) error {
	return errAt(at, "want %s, got %s", what, describeByte(b, at))
}

// describeByte names b[at] for an error message.
func describeByte(b []byte, at int) string {
	if at >= len(b) {
		return "the end of the file"
	}
	c := b[at]
	switch {
	case c == '\n':
		return "a newline"
	case c < 0x20 || c >= 0x7f:
		return fmt.Sprintf("byte 0x%02x", c)
	}
	return fmt.Sprintf("%q", rune(c))
}

func isSpace(c byte) bool { return c == ' ' || c == '\n' || c == '\t' || c == '\r' }

// skipSpace returns the position of the first byte from p on that is not
// JSON whitespace (len(b) when there is none).
func skipSpace(b []byte, p int) int {
	for p < len(b) && isSpace(b[p]) {
		p++
	}
	return p
}

// nextByte is skipSpace that wants a byte after the whitespace.
func nextByte(b []byte, p int) (int, error) {
	p = skipSpace(b, p)
	if p >= len(b) {
		return p, errMore
	}
	return p, nil
}

// lexString reads the string whose opening quote is b[p]. It returns the
// position after the closing quote, and plain when the bytes between the
// quotes are the text itself (no escapes, valid UTF-8).
func lexString(b []byte, p int) (int, bool, error) {
	plain, ascii := true, true
	i := p + 1
scan:
	for {
		j := bytes.IndexByte(b[i:], '"')
		if j < 0 {
			j = len(b) - i // check what there is; more may follow
		}
		for k := i; k < i+j; k++ {
			c := b[k]
			switch {
			case c < 0x20:
				return 0, false, errAt(k, "want a string's character, got control byte 0x%02x (it must be escaped)", c)
			case c >= utf8.RuneSelf:
				ascii = false
			case c == '\\':
				plain = false
				e, err := lexEscape(b, k)
				if err != nil {
					return 0, false, err
				}
				i = e
				continue scan
			}
		}
		if i+j >= len(b) {
			return 0, false, errMore
		}
		if !ascii && plain {
			plain = utf8.Valid(b[p+1 : i+j])
		}
		return i + j + 1, plain, nil
	}
}

// lexEscape reads the escape whose backslash is b[k] and returns the
// position after it.
func lexEscape(b []byte, k int) (int, error) {
	if k+1 >= len(b) {
		return 0, errMore
	}
	switch b[k+1] {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		return k + 2, nil
	case 'u':
		for h := k + 2; h < k+6; h++ {
			if h >= len(b) {
				return 0, errMore
			}
			if c := b[h]; !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
				return 0, want(b, h, `a hex digit in a \u escape`)
			}
		}
		return k + 6, nil
	}
	return 0, want(b, k+1, `an escape (\" \\ \/ \b \f \n \r \t or \uXXXX) after the backslash`)
}

// text is the string b[p:end] (quotes included) as encoding/json decodes
// it: escapes resolved, invalid UTF-8 replaced.
func text(b []byte, p, end int, plain bool) string {
	if plain {
		return string(b[p+1 : end-1])
	}
	var s string
	json.Unmarshal(b[p:end], &s) // lexString checked it
	return s
}

// lexNumber reads the number at b[p] and says whether it is an integer
// (no fraction, no exponent).
func lexNumber(b []byte, p int) (int, bool, error) {
	i := p
	if b[i] == '-' {
		i++
	}
	digits := func(first bool) error {
		if i >= len(b) {
			return errMore
		}
		if b[i] < '0' || b[i] > '9' {
			return want(b, i, "a digit")
		}
		if first && b[i] == '0' {
			i++
			return nil
		}
		for i < len(b) && '0' <= b[i] && b[i] <= '9' {
			i++
		}
		return nil
	}
	if err := digits(true); err != nil {
		return 0, false, err
	}
	integer := true
	if i < len(b) && b[i] == '.' {
		integer = false
		i++
		if err := digits(false); err != nil {
			return 0, false, err
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		integer = false
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if err := digits(false); err != nil {
			return 0, false, err
		}
	}
	if i >= len(b) {
		return 0, false, errMore // the number may go on
	}
	return i, integer, nil
}

// parseInt is the integer b[p:end] (lexNumber's) as int64; false when it
// does not fit.
func parseInt(b []byte) (int64, bool) {
	neg := b[0] == '-'
	if neg {
		b = b[1:]
	}
	if len(b) > 19 {
		return 0, false
	}
	var u uint64
	for _, c := range b {
		u = u*10 + uint64(c-'0')
	}
	if neg {
		return -int64(u), u <= 1<<63
	}
	return int64(u), u < 1<<63
}

// lexLiteral reads the literal lit (true, false, null) at b[p].
func lexLiteral(b []byte, p int, lit string) (int, error) {
	for k := range len(lit) {
		if p+k >= len(b) {
			return 0, errMore
		}
		if b[p+k] != lit[k] {
			return 0, want(b, p+k, fmt.Sprintf("%q (of %s)", lit[k], lit))
		}
	}
	return p + len(lit), nil
}

// skipValue reads the value at b[p], whole, checking that it is valid
// JSON; depth is the nesting of the array or object holding it.
func skipValue(b []byte, p, depth int) (int, error) {
	switch c := b[p]; {
	case c == '{' || c == '[':
		return skipContainer(b, p, depth+1)
	case c == '"':
		end, _, err := lexString(b, p)
		return end, err
	case c == '-' || '0' <= c && c <= '9':
		end, _, err := lexNumber(b, p)
		return end, err
	case c == 't':
		return lexLiteral(b, p, "true")
	case c == 'f':
		return lexLiteral(b, p, "false")
	case c == 'n':
		return lexLiteral(b, p, "null")
	}
	return 0, want(b, p, "a value (an object, array, string, number, true, false or null)")
}

func skipContainer(b []byte, p, depth int) (int, error) {
	if depth > maxDepth {
		return 0, errAt(p, "nested more than %d deep", maxDepth)
	}
	obj := b[p] == '{'
	closing := byte(']')
	if obj {
		closing = '}'
	}
	p, err := nextByte(b, p+1)
	if err != nil {
		return 0, err
	}
	if b[p] == closing {
		return p + 1, nil
	}
	for {
		if obj {
			if p, err = memberName(b, p); err != nil {
				return 0, err
			}
		}
		if p, err = skipValue(b, p, depth); err != nil {
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
		case closing:
			return p + 1, nil
		default:
			return 0, want(b, p, fmt.Sprintf("',' or '%c'", closing))
		}
	}
}

// memberName reads an object member's name and the colon after it, and
// returns the position of its value.
func memberName(b []byte, p int) (int, error) {
	if b[p] != '"' {
		return 0, want(b, p, "a member name in quotes")
	}
	end, _, err := lexString(b, p)
	if err != nil {
		return 0, err
	}
	return colon(b, end)
}

// colon reads the colon after a member's name at p (whitespace around it
// allowed) and returns the position of the value.
func colon(b []byte, p int) (int, error) {
	p, err := nextByte(b, p)
	if err != nil {
		return 0, err
	}
	if b[p] != ':' {
		return 0, want(b, p, "':' after a member name")
	}
	return nextByte(b, p+1)
}

// kindOf names the JSON type of the value starting with c.
func kindOf(c byte) string {
	switch {
	case c == '{':
		return "an object"
	case c == '[':
		return "an array"
	case c == '"':
		return "a string"
	case c == 't' || c == 'f':
		return "a boolean"
	case c == 'n':
		return "null"
	}
	return "a number"
}
