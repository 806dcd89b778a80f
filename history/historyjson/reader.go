package historyjson

import (
	"io"

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

// next reads on until it has decoded the next operation into op, or the
// file's end.
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
			err = r.start(c)
		case atMember:
			if c == '}' && r.first {
				r.pos++
				r.stage = atEnd
				continue
			}
			err = r.member()
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
			return r.op(op)
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
		if err != nil {
			return err
		}
	}
}

// start reads the history's object's opening, c its first byte.
func (r *Reader) start(c byte) error {
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
	return nil
}

// op decodes the operation at the next byte into op, reading more of the
// file while the buffer ends inside it.
func (r *Reader) op(op *history.Op) error {
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
