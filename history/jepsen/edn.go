package jepsen

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode"
)

// The EDN reader reads what Jepsen's history.edn holds and no more: maps,
// vectors, lists and sets of keywords, symbols (nil, true, false), integers,
// floats, strings and characters. A tagged element (#inst "...",
// #jepsen.history.Op{...}) is read as its tag and value, so a field the
// importer does not use may hold anything Clojure printed; one it uses must
// hold a value it can map, or the importer says so.

// ednKind is the type of an EDN value.
type ednKind int

const (
	ednNil ednKind = iota
	ednBool
	ednInt
	ednFloat
	ednString
	ednChar
	ednKeyword
	ednSymbol
	ednVector
	ednList
	ednSet
	ednMap
	ednTagged
)

// ednValue is one EDN value and where it starts. A map's items are its
// keys and values in turn; a tagged element's one item is its value.
type ednValue struct {
	kind      ednKind
	s         string // string, char, keyword and symbol (without ':'), tag
	i         int64
	b         bool
	items     []ednValue
	line, col int
}

// get is the value of a map's keyword key, or nil.
func (v *ednValue) get(key string) *ednValue {
	for i := 0; i+1 < len(v.items); i += 2 {
		if k := &v.items[i]; k.kind == ednKeyword && k.s == key {
			return &v.items[i+1]
		}
	}
	return nil
}

// String prints v back in EDN, for error messages and texts taken from a
// history (an :error field).
func (v *ednValue) String() string {
	switch v.kind {
	case ednNil:
		return "nil"
	case ednBool:
		return strconv.FormatBool(v.b)
	case ednInt:
		return strconv.FormatInt(v.i, 10)
	case ednString:
		return strconv.Quote(v.s)
	case ednChar:
		return `\` + v.s
	case ednKeyword:
		return ":" + v.s
	case ednTagged:
		return "#" + v.s + " " + v.items[0].String()
	case ednVector, ednList, ednSet, ednMap:
		delims := map[ednKind][2]string{ednVector: {"[", "]"}, ednList: {"(", ")"}, ednSet: {"#{", "}"}, ednMap: {"{", "}"}}[v.kind]
		parts := make([]string, len(v.items))
		for i := range v.items {
			parts[i] = v.items[i].String()
		}
		return delims[0] + strings.Join(parts, " ") + delims[1]
	}
	return v.s // float and symbol keep their text
}

// EDNError is input that is not the EDN a Jepsen history holds, or a value
// that cannot be mapped: Line and Col (from 1) say where.
type EDNError struct {
	Line, Col int
	Msg       string
}

func (e *EDNError) Error() string { return fmt.Sprintf("line %d, column %d: %s", e.Line, e.Col, e.Msg) }

// ednReader reads EDN values one after another from a stream, in the
// memory of one value: each value is bounded (maxEDNValue runes,
// maxEDNItems elements, maxEDNToken runes a token), so a file of any size
// that is not a Jepsen history is refused at its first value that cannot
// be one, having read no more than that value.
type ednReader struct {
	r               *bufio.Reader
	line, col       int
	lastLine, lastC int // before the last rune read, for unread
	// left is what the value being read may still take, in runes and
	// elements (begin resets them); at is where it started.
	left, elems int
	at          [2]int
}

// The bounds on one value, an operation's map: Jepsen's are a line of a
// few hundred bytes, an :error with a stack trace some kilobytes.
const (
	maxEDNValue = 1 << 20
	maxEDNItems = 10000
	maxEDNToken = 4096
)

func newEDNReader(r io.Reader) *ednReader {
	d := &ednReader{r: bufio.NewReader(r), line: 1, col: 1}
	d.begin()
	return d
}

// begin starts a value's bounds.
func (d *ednReader) begin() {
	d.left, d.elems, d.at = maxEDNValue, maxEDNItems, [2]int{}
}

func (d *ednReader) errAt(line, col int, format string, args ...any) error {
	return &EDNError{Line: line, Col: col, Msg: fmt.Sprintf(format, args...)}
}

// rune reads one rune; eof is -1.
func (d *ednReader) rune() (rune, error) {
	c, size, err := d.r.ReadRune()
	if err == io.EOF {
		return -1, nil
	}
	if err != nil {
		return 0, err
	}
	if c == unicode.ReplacementChar && size == 1 {
		return 0, d.errAt(d.line, d.col, "not UTF-8: save the history as UTF-8")
	}
	if d.left--; d.left < 0 {
		if d.at[0] == 0 { // blanks or comments before any value
			d.at = [2]int{d.line, d.col}
		}
		return 0, d.errAt(d.at[0], d.at[1], "more than %d MiB for one value (blanks and comments before it included): a Jepsen history holds one operation map a line", maxEDNValue>>20)
	}
	d.lastLine, d.lastC = d.line, d.col
	if c == '\n' {
		d.line, d.col = d.line+1, 1
	} else {
		d.col++
	}
	return c, nil
}

func (d *ednReader) unread() {
	_ = d.r.UnreadRune()
	d.line, d.col = d.lastLine, d.lastC
}

// skip passes whitespace, commas and comments; it returns the next rune,
// read.
func (d *ednReader) skip() (rune, error) {
	for {
		c, err := d.rune()
		if err != nil || c == -1 {
			return c, err
		}
		switch {
		case c == ';':
			for c != '\n' && c != -1 {
				if c, err = d.rune(); err != nil {
					return c, err
				}
			}
		case c != ',' && !unicode.IsSpace(c):
			return c, nil
		}
	}
}

// ednClose is a closing delimiter where a value was wanted: read's caller
// for a collection takes it as the collection's end.
type ednClose struct{ c rune }

func (e ednClose) Error() string { return fmt.Sprintf("unexpected %q", e.c) }

// next reads the next value; io.EOF when the input ends between values.
func (d *ednReader) next() (ednValue, error) {
	v, err := d.read()
	var end ednClose
	if errors.As(err, &end) {
		return v, d.errAt(v.line, v.col, "unexpected %q with nothing open: remove it", end.c)
	}
	return v, err
}

// maxEDNDepth bounds nesting, so a hostile file cannot exhaust the stack.
const maxEDNDepth = 1000

func (d *ednReader) read() (ednValue, error) { return d.readDepth(0) }

func (d *ednReader) readDepth(depth int) (ednValue, error) {
	c, err := d.skip()
	v := ednValue{line: d.lastLine, col: d.lastC}
	if err != nil {
		return v, err
	}
	if d.at[0] == 0 {
		d.at = [2]int{v.line, v.col}
	}
	if c == -1 {
		return v, io.EOF
	}
	if depth > maxEDNDepth {
		return v, d.errAt(v.line, v.col, "nested deeper than %d: a history line is a flat map", maxEDNDepth)
	}
	switch c {
	case ')', ']', '}':
		return v, ednClose{c}
	case '(':
		return d.items(v, ednList, ')', depth)
	case '[':
		return d.items(v, ednVector, ']', depth)
	case '{':
		return d.items(v, ednMap, '}', depth)
	case '"':
		v.kind = ednString
		v.s, err = d.str(v)
		return v, err
	case '\\':
		v.kind = ednChar
		v.s, err = d.token("")
		if err == nil && v.s == "" {
			err = d.errAt(v.line, v.col, `a lone \: write a character such as \a or \newline`)
		}
		return v, err
	case ':':
		v.kind = ednKeyword
		v.s, err = d.token("")
		if err == nil && v.s == "" {
			err = d.errAt(v.line, v.col, "a keyword without a name: write :name")
		}
		return v, err
	case '#':
		return d.dispatch(v, depth)
	}
	if !isEDNSymbolRune(c) {
		return v, d.errAt(v.line, v.col, "unexpected %q: a Jepsen history holds maps, keywords, numbers and strings", c)
	}
	text, err := d.token(string(c))
	if err != nil {
		return v, err
	}
	return d.atom(v, text)
}

// dispatch reads what follows '#': a set, a discarded value, or a tagged
// element.
func (d *ednReader) dispatch(v ednValue, depth int) (ednValue, error) {
	c, err := d.rune()
	if err != nil {
		return v, err
	}
	switch {
	case c == '{':
		return d.items(v, ednSet, '}', depth)
	case c == '_':
		if _, err := d.readDepth(depth + 1); err != nil {
			return v, err
		}
		return d.readDepth(depth)
	case c != -1 && unicode.IsLetter(c):
		tag, err := d.token(string(c))
		if err != nil {
			return v, err
		}
		inner, err := d.readDepth(depth + 1)
		if err == io.EOF {
			return v, d.errAt(v.line, v.col, "#%s with no value after it: complete or remove it", tag)
		}
		if err != nil {
			return v, err
		}
		v.kind, v.s, v.items = ednTagged, tag, []ednValue{inner}
		return v, nil
	}
	return v, d.errAt(v.line, v.col, "unexpected # not followed by {, _ or a tag: remove it")
}

// items reads a collection's elements up to its closing rune.
func (d *ednReader) items(v ednValue, kind ednKind, closing rune, depth int) (ednValue, error) {
	v.kind = kind
	for {
		item, err := d.readDepth(depth + 1)
		var end ednClose
		switch {
		case errors.As(err, &end) && end.c == closing:
			if kind == ednMap && len(v.items)%2 == 1 {
				k := v.items[len(v.items)-1]
				return v, d.errAt(k.line, k.col, "map key %s has no value: give it one or remove it", k.String())
			}
			return v, nil
		case errors.As(err, &end):
			return v, d.errAt(item.line, item.col, "%q closes a %s opened at line %d, column %d: want %q", end.c, kindName(kind), v.line, v.col, closing)
		case err == io.EOF:
			return v, d.errAt(v.line, v.col, "%s never closed: add %q (is the file cut short?)", kindName(kind), closing)
		case err != nil:
			return v, err
		}
		if d.elems--; d.elems < 0 {
			return v, d.errAt(d.at[0], d.at[1], "a value of more than %d elements: a Jepsen history holds one operation map a line", maxEDNItems)
		}
		v.items = append(v.items, item)
	}
}

func kindName(k ednKind) string {
	return map[ednKind]string{ednList: "list", ednVector: "vector", ednMap: "map", ednSet: "set"}[k]
}
