package historyjson

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/lockcheck/lockcheck/history"
)

// Reader reads a history file in one pass, an operation at a time, in
// any layout JSON allows: Save's operation per line, one document on one
// line, indented as jq writes it, members and fields in any order,
// whitespace anywhere. What it accepts and what it decodes are what
// encoding/json would give for a History (the fuzz tests hold it to
// that), but a history of any length needs the memory of its head and
// one operation, and is read about as fast as Save's lines alone were.
//
// Two limits encoding/json lacks: "ops" may appear once (encoding/json
// keeps the last), and a format newer than this build reads is refused.
type Reader struct {
	path string
	src  source
	size int64
	// buf[pos:end] is what was read of the file and not decoded yet;
	// buf[0] is the file's byte base.
	buf      []byte
	pos, end int
	base     int64
	eof      bool

	dec   opDecoder
	stage stage
	// first: the next member or operation would be its object's or
	// array's first.
	first bool
	n     int
	// opsAt is the file offset of the operations' array (-1 before it),
	// opsDone says it ended.
	opsAt   int64
	opsDone bool
	// head is the object of every member but the operations, as the file
	// has them (encoding/json decodes it at the end); format is the
	// version a member gave before the operations.
	head   []byte
	format int
	h      *history.History
	err    error
}

// stage is what the reader reads next.
type stage int8

const (
	atStart     stage = iota // the history's object
	atMember                 // a member's name ('}' if first)
	afterMember              // ',' or '}'
	atOp                     // an operation (']' if first)
	afterOp                  // ',' or ']'
	atEnd                    // nothing but whitespace
)

// bufSize is the reader's buffer; a value longer than it (a head member,
// an operation) grows it.
const bufSize = 1 << 20

// Open starts reading the history at path.
func Open(path string) (*Reader, error) {
	f, fi, err := OpenInput(path)
	if err != nil {
		return nil, err
	}
	return newReader(path, f, fi.Size(), bufSize), nil
}

// source is what a Reader reads: a file, or in tests bytes in memory;
// ReadAt reads it again for an error's line.
type source interface {
	io.Reader
	io.ReaderAt
}

// newReader reads src, of size bytes, named path in errors, through a
// buffer of bufSize bytes to start with (tests make it tiny, so that
// every value crosses the buffer's end somewhere).
func newReader(path string, src source, size int64, bufSize int) *Reader {
	return &Reader{path: path, src: src, size: size, buf: make([]byte, max(bufSize, 1)), opsAt: -1, head: []byte{'{'}}
}

// Close closes the file.
func (r *Reader) Close() error {
	if c, ok := r.src.(io.Closer); ok {
		return c.Close()
	}
	return nil
}

// Next decodes the next operation into op. After the last it returns
// io.EOF, and Head has the rest of the history. An error names the
// operation, line, column and byte offset, and what was expected there.
func (r *Reader) Next(op *history.Op) error {
	if r.err != nil {
		return r.err
	}
	if err := r.next(op); err != nil {
		r.err = r.wrap(err)
		return r.err
	}
	return nil
}

// Index is the index of the operation Next decoded last: its place in
// the file.
func (r *Reader) Index() int { return r.n - 1 }

// Head is everything but the operations (format, meta, scenario, fault
// windows), once Next has returned io.EOF; nil before.
func (r *Reader) Head() *history.History { return r.h }

// Estimate is how many operations the file holds, judged from the bytes
// those read so far took: exact once they have all been read. A reader
// that must size something before the end (RunFile's groups) uses it.
func (r *Reader) Estimate() int {
	read := r.base + int64(r.pos) - r.opsAt
	if r.opsDone || r.n == 0 || r.opsAt < 0 || read <= 0 {
		return r.n
	}
	return int(float64(r.n) * float64(r.size-r.opsAt) / float64(read))
}

// errEnd is the end of the file where peek wanted a byte.
var errEnd = errors.New("end of file")

func (r *Reader) next(op *history.Op) error {
	for {
		c, err := r.peek()
		if err == errEnd && r.stage != atEnd {
			return r.cutShort()
		} else if err != nil && err != errEnd {
			return err
		}
		switch r.stage {
		case atStart:
			switch c {
			case '{':
				r.pos++
				r.stage, r.first = atMember, true
			case 'n': // encoding/json reads null as an empty history
				if _, _, err := r.unit(func(b []byte, p int) (int, error) { return lexLiteral(b, p, "null") }); err != nil {
					return err
				}
				r.stage = atEnd
			default:
				return want(r.buf[:r.end], r.pos, "the history's object ('{')")
			}
		case atMember:
			if c == '}' && r.first {
				r.pos++
				r.stage = atEnd
				continue
			}
			if err := r.member(); err != nil {
				return err
			}
		case afterMember:
			switch c {
			case ',':
				r.pos++
				r.stage, r.first = atMember, false
			case '}':
				r.pos++
				r.stage = atEnd
			default:
				return want(r.buf[:r.end], r.pos, "',' or '}' after a member of the history's object")
			}
		case atOp:
			if c == ']' && r.first {
				r.pos++
				r.opsDone, r.stage = true, afterMember
				continue
			}
			for {
				end, err := r.dec.op(r.buf[:r.end], r.pos, 2, op)
				if err == errMore {
					if err = r.more(); err != nil {
						return err
					}
					continue
				}
				if err != nil {
					return err
				}
				r.pos = end
				break
			}
			r.n++
			r.stage = afterOp
			return nil
		case afterOp:
			switch c {
			case ',':
				r.pos++
				r.stage, r.first = atOp, false
			case ']':
				r.pos++
				r.opsDone, r.stage = true, afterMember
			default:
				return want(r.buf[:r.end], r.pos, "',' or ']' after an operation")
			}
		case atEnd:
			if err == nil {
				return want(r.buf[:r.end], r.pos, "the end of the file after the history's object")
			}
			return r.finish()
		}
	}
}

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

// unit runs read on the unread bytes from the next one, again on more of
// the file while read says the buffer ended inside what it reads, and
// moves past what it read; it returns where that is in the buffer.
func (r *Reader) unit(read func(b []byte, p int) (int, error)) (int, int, error) {
	for {
		end, err := read(r.buf[:r.end], r.pos)
		if err == errMore {
			if err = r.more(); err != nil {
				return 0, 0, err
			}
			continue
		}
		if err != nil {
			return 0, 0, err
		}
		start := r.pos
		r.pos = end
		return start, end, nil
	}
}

// peek skips whitespace and returns the next byte, reading more of the
// file as needed: errEnd at its end.
func (r *Reader) peek() (byte, error) {
	for {
		r.pos = skipSpace(r.buf[:r.end], r.pos)
		if r.pos < r.end {
			return r.buf[r.pos], nil
		}
		if r.eof {
			return 0, errEnd
		}
		if err := r.fill(); err != nil {
			return 0, err
		}
	}
}

// more reads more of the file for a value the buffer ends inside.
func (r *Reader) more() error {
	if r.eof {
		return r.cutShort()
	}
	return r.fill()
}

// fill keeps the unread bytes, moved to the buffer's start (the buffer
// doubled when they fill it), and reads more after them.
func (r *Reader) fill() error {
	if r.pos > 0 {
		r.end = copy(r.buf, r.buf[r.pos:r.end])
		r.base += int64(r.pos)
		r.pos = 0
	}
	if r.end == len(r.buf) {
		r.buf = append(r.buf, make([]byte, len(r.buf))...)
	}
	n, err := r.src.Read(r.buf[r.end:])
	r.end += n
	switch {
	case err == io.EOF:
		r.eof = true
	case err != nil:
		return fmt.Errorf("read history %s: %w", r.path, err)
	}
	return nil
}

func (r *Reader) endErr(err error) error {
	if err == errEnd {
		return r.cutShort()
	}
	return err
}

func (r *Reader) cutShort() error {
	if r.base+int64(r.end) == 0 {
		return errAt(0, "the file is empty")
	}
	return errAt(r.end, "the file ends before the history does: it was cut short")
}

// wrap turns a malformed value's position into the file's line, column
// and byte offset, and names the operation it was in.
func (r *Reader) wrap(err error) error {
	var je *jsonError
	if err == io.EOF || !errors.As(err, &je) {
		return err
	}
	off := r.base + int64(je.at)
	line, col := r.position(off)
	where := ""
	if r.stage == atOp {
		where = fmt.Sprintf("op %d at ", r.n)
	}
	return fmt.Errorf("decode history %s: %sline %d, column %d (byte %d): %s", r.path, where, line, col, off, je.msg)
}

// position is the line and column (both from 1, the column in bytes) of
// the byte at offset off; it reads the file again, which only an error
// costs.
func (r *Reader) position(off int64) (line, col int) {
	buf := make([]byte, 1<<16)
	line, lineStart, at := 1, int64(0), int64(0)
	for at < off {
		n, err := r.src.ReadAt(buf[:min(int64(len(buf)), off-at)], at)
		for i, c := range buf[:n] {
			if c == '\n' {
				line++
				lineStart = at + int64(i) + 1
			}
		}
		at += int64(n)
		if err != nil {
			break
		}
	}
	return line, int(off-lineStart) + 1
}

// ReadOps appends the next operations to ops, at most limit of them
// (limit < 0: all). It sizes ops once from Estimate rather than doubling
// it: growing a slice of millions of operations copies it again and
// again, each copy a stretch the garbage collector waits on. It returns
// io.EOF, with the operations, when the file has no more.
func (r *Reader) ReadOps(ops []history.Op, limit int) ([]history.Op, error) {
	var op history.Op
	for k := 0; limit < 0 || k < limit; k++ {
		if k == 1<<12 {
			rest := r.Estimate() - r.n
			rest += rest/8 + 1<<10
			if limit >= 0 {
				rest = min(rest, limit-k)
			}
			if len(ops)+rest > cap(ops) {
				ops = append(make([]history.Op, 0, len(ops)+rest), ops...)
			}
		}
		if err := r.Next(&op); err != nil {
			return ops, err
		}
		ops = append(ops, op)
	}
	return ops, nil
}
