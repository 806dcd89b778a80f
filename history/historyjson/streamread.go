package historyjson

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"

	"github.com/lockcheck/lockcheck/history"
)

// maxStreamLine bounds a line of the stream: an operation's line is a few
// hundred bytes, a fault window's a few more.
const maxStreamLine = 16 << 20

// LoadStream rebuilds the history a run had streamed to path before it
// stopped. A last line cut short by the kill is dropped; the history is
// marked Partial. Any other bad line is refused with its line and column
// and what was expected there: a line the run wrote whole is well-formed,
// and one it was writing when killed is a start of one.
func LoadStream(path string) (*history.History, error) {
	f, _, err := OpenInput(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r := bufio.NewReaderSize(f, 1<<16)
	var h history.History
	lines := 0
	for n := 1; ; n++ {
		line, last, err := readStreamLine(r, path, n)
		if err != nil {
			return nil, err
		}
		line = bytes.TrimSpace(line)
		if len(line) > 0 {
			jf := &JSONFile{Path: path, data: line, line: n}
			if err := checkJSON(line); err != nil {
				if err == errMore && last && lines > 0 {
					break // the line being written when the run was killed
				}
				if err == errMore {
					err = errAt(len(line), "the line ends before its value does")
				}
				return nil, jf.wrap(err)
			}
			var l history.StreamLine
			if err := jf.Decode(&l); err != nil {
				return nil, err
			}
			lines++
			switch {
			case l.Meta != nil:
				h.Meta = *l.Meta
			case l.Op != nil:
				h.Ops = append(h.Ops, *l.Op)
			case l.Fault != nil:
				// each window had a line of its own before: a bigger
				// index is not the run's
				if l.I < 0 || l.I >= lines {
					return nil, jf.wrap(errAt(0, "fault window index %d on line %d: want 0 to %d", l.I, n, lines-1))
				}
				for len(h.Faults) <= l.I {
					h.Faults = append(h.Faults, history.Fault{})
				}
				h.Faults[l.I] = *l.Fault
			}
		}
		if last {
			break
		}
	}
	if lines == 0 {
		return nil, errors.New("history stream " + path + " is empty: the run stopped before it recorded anything")
	}
	h.Meta.Partial = true
	h.Meta.DurationNs = 0
	h.Meta.DurationNs = h.End()
	h.Sort()
	return &h, nil
}

// readStreamLine reads line n, without its newline; last says the file
// ends after it. A line that starts with what is not JSON is refused at
// once, and one longer than maxStreamLine when it gets that long: neither
// costs the rest of a huge line.
func readStreamLine(r *bufio.Reader, path string, n int) ([]byte, bool, error) {
	var acc []byte
	for {
		chunk, err := r.ReadSlice('\n')
		acc = append(acc, chunk...)
		switch {
		case err == nil:
			return acc[:len(acc)-1], false, nil
		case err == io.EOF:
			return acc, true, nil
		case err != bufio.ErrBufferFull:
			return nil, false, fmt.Errorf("read history stream %s: %w", path, err)
		}
		if len(acc) == len(chunk) { // the line's start: is it JSON at all?
			if err := checkJSON(acc); err != nil && err != errMore {
				return nil, false, (&JSONFile{Path: path, data: acc, line: n}).wrap(err)
			}
		}
		if len(acc) > maxStreamLine {
			return nil, false, fmt.Errorf("%s: line %d is longer than %d MiB: not a line of a run's stream (lockcheck writes one operation a line)", path, n, maxStreamLine>>20)
		}
	}
}
