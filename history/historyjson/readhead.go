package historyjson

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/lockcheck/lockcheck/history"
)

// member reads a member of the history's object: the operations' array
// is entered, a member of the head kept, any other skipped.
func (r *Reader) member() error {
	var nameAt, nameEnd, valueAt int
	var plain bool
	for {
		b, p := r.buf[:r.end], r.pos
		if b[p] != '"' {
			return want(b, p, "a member name in quotes")
		}
		end, pl, err := lexString(b, p)
		if err == nil {
			valueAt, err = colon(b, end)
		}
		if err == errMore {
			if err = r.more(); err != nil {
				return err
			}
			continue
		}
		if err != nil {
			return err
		}
		nameAt, nameEnd, plain = p, end, pl
		break
	}
	name := text(r.buf, nameAt, nameEnd, plain)
	r.stage = afterMember
	switch {
	case strings.EqualFold(name, "ops"):
		if r.opsAt >= 0 {
			return errAt(nameAt, "a second %q: a history has one array of operations", name)
		}
		r.pos = valueAt
		r.opsAt = r.base + int64(valueAt)
		switch c := r.buf[valueAt]; c {
		case '[':
			if r.format > history.Format {
				return r.newer(r.format)
			}
			r.pos++
			r.stage, r.first = atOp, true
		case 'n':
			r.opsDone = true
			_, _, err := r.unit(func(b []byte, p int) (int, error) { return lexLiteral(b, p, "null") })
			return err
		default:
			return errAt(valueAt, "want the operations' array, got %s", kindOf(c))
		}
	case isHeadMember(name):
		if len(r.head) > 1 {
			r.head = append(r.head, ',')
		}
		r.head = append(append(r.head, r.buf[nameAt:nameEnd]...), ':')
		r.pos = valueAt
		start, end, err := r.unit(func(b []byte, p int) (int, error) { return skipValue(b, p, 1) })
		if err != nil {
			return err
		}
		value := r.buf[start:end]
		r.head = append(r.head, value...)
		if strings.EqualFold(name, "format") {
			json.Unmarshal(value, &r.format) // a type error is the head's, at the end
		}
	default:
		r.pos = valueAt
		return r.skip(1)
	}
	return nil
}

// isHeadMember says a member is one of History's but the operations.
func isHeadMember(name string) bool {
	for _, n := range [...]string{"format", "meta", "scenario", "faults"} {
		if strings.EqualFold(name, n) {
			return true
		}
	}
	return false
}

// skip reads a value the history does not use, checking it is valid JSON:
// an array or object a member or element at a time, so that however long
// it is only one of them is in memory. depth is its holder's nesting.
func (r *Reader) skip(depth int) error {
	c, err := r.peek()
	if err != nil {
		return r.endErr(err)
	}
	if c != '{' && c != '[' {
		_, _, err := r.unit(func(b []byte, p int) (int, error) { return skipValue(b, p, depth) })
		return err
	}
	if depth+1 > maxDepth {
		return errAt(r.pos, "nested more than %d deep", maxDepth)
	}
	obj, closing := c == '{', byte(']')
	if obj {
		closing = '}'
	}
	r.pos++
	if c, err = r.peek(); err != nil {
		return r.endErr(err)
	}
	if c == closing {
		r.pos++
		return nil
	}
	for {
		if obj {
			if _, _, err := r.unit(memberName); err != nil {
				return err
			}
		}
		if err := r.skip(depth + 1); err != nil {
			return err
		}
		if c, err = r.peek(); err != nil {
			return r.endErr(err)
		}
		switch c {
		case ',':
			r.pos++
			if obj {
				if _, err := r.peek(); err != nil {
					return r.endErr(err)
				}
			}
		case closing:
			r.pos++
			return nil
		default:
			return want(r.buf[:r.end], r.pos, fmt.Sprintf("',' or '%c'", closing))
		}
	}
}

// finish decodes the head once the file has ended.
func (r *Reader) finish() error {
	var h history.History
	if err := json.Unmarshal(append(r.head, '}'), &h); err != nil {
		return fmt.Errorf("decode history %s: its head (format, meta, scenario, faults): %w", r.path, err)
	}
	if h.Format > history.Format {
		return r.newer(h.Format)
	}
	r.h, r.head = &h, nil
	return io.EOF
}

func (r *Reader) newer(format int) error {
	return fmt.Errorf("history %s has format %d; this lockcheck reads up to %d: use a newer lockcheck", r.path, format, history.Format)
}
