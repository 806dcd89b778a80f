package jepsen

import (
	"errors"
	"io"
)

// ednWhole is a history written as one vector (or list) of operations,
// read an element at a time: its elements are never all in memory.
type ednWhole struct {
	d       *ednReader
	open    ednValue // where it opened, for errors
	closing rune
}

// openWhole reads the opening of a history written as one vector, if the
// input starts with one; nil when it does not (nothing is read then).
func (d *ednReader) openWhole() (*ednWhole, error) {
	c, err := d.skip()
	if err != nil || c == -1 {
		return nil, err
	}
	w := &ednWhole{d: d, open: ednValue{kind: ednVector, line: d.lastLine, col: d.lastC}}
	switch c {
	case '[':
		w.closing = ']'
	case '(':
		w.open.kind, w.closing = ednList, ')'
	default:
		d.unread()
		return nil, nil
	}
	return w, nil
}

// next reads the next element; io.EOF after the closing bracket.
func (w *ednWhole) next() (ednValue, error) {
	v, err := w.d.readDepth(1)
	var end ednClose
	switch {
	case errors.As(err, &end) && end.c == w.closing:
		return v, io.EOF
	case errors.As(err, &end):
		return v, w.d.errAt(v.line, v.col, "%q closes a %s opened at line %d, column %d: want %q", end.c, kindName(w.open.kind), w.open.line, w.open.col, w.closing)
	case err == io.EOF:
		return v, w.d.errAt(w.open.line, w.open.col, "%s never closed: add %q (is the file cut short?)", kindName(w.open.kind), w.closing)
	}
	return v, err
}
