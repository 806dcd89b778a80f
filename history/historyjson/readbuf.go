package historyjson

import (
	"errors"
	"fmt"
	"io"
)

// The Reader's buffer: what was read of the file and not decoded yet, read
// a value at a time, and an error's position in the file.

// errEnd is the end of the file where peek wanted a byte.
var errEnd = errors.New("end of file")

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
