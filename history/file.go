package history

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
)

// Save writes the history to path as JSON, one operation per line. It
// encodes an operation at a time, so a long run's history is never held
// twice in memory as text.
func (h *History) Save(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("write history: %w", err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	err = h.encode(w)
	if ferr := w.Flush(); err == nil {
		err = ferr
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("write history %s: %w", path, err)
	}
	return nil
}

func (h *History) encode(w io.Writer) error {
	if err := h.writeHead(w); err != nil || h.Ops == nil {
		return err
	}
	var line []byte // one operation per line, newline-terminated
	for i := range h.Ops {
		line = line[:0]
		if i > 0 {
			line = append(line, ',')
		}
		line = append(appendOp(line, &h.Ops[i]), '\n')
		if _, err := w.Write(line); err != nil {
			return err
		}
	}
	_, err := io.WriteString(w, "]}\n")
	return err
}

// writeHead writes everything but the operations, then the start of their
// array (a line of its own), or "null}" when h.Ops is nil.
func (h *History) writeHead(w io.Writer) error {
	head := struct {
		Format   int             `json:"format,omitempty"`
		Meta     Meta            `json:"meta"`
		Scenario json.RawMessage `json:"scenario,omitempty"`
		Faults   []Fault         `json:"faults"`
	}{h.Format, h.Meta, h.Scenario, h.Faults}
	b, err := json.Marshal(head)
	if err != nil {
		return err
	}
	// the head's closing brace gives way to the operations; none is null,
	// as a nil slice is, so that a history reads back as it was
	if _, err := fmt.Fprintf(w, "%s,\n\"ops\": ", b[:len(b)-1]); err != nil {
		return err
	}
	if h.Ops == nil {
		_, err = io.WriteString(w, "null}\n")
		return err
	}
	_, err = io.WriteString(w, "[\n")
	return err
}

// Load reads a history written by Save (or any JSON with its fields),
// operations in the file's order: an operation's index is its place in
// the file, for every reader.
func Load(path string) (*History, error) {
	// Sized once from the file's line count (Save writes an operation per
	// line): growing one slice of millions of operations copies it again
	// and again, each copy a long stretch the garbage collector waits on
	// (most of a load's time went there before).
	lines, err := CountLines(path)
	if err != nil {
		return nil, err
	}
	if fi, err := os.Stat(path); err == nil {
		// a file of another shape (pretty-printed) has several lines an
		// operation; an operation's line has 60 bytes or more
		lines = min(lines, int(fi.Size()/60)+1)
	}
	var h *History
	err = Scan(path, func(head *History) error {
		h = head
		h.Ops = make([]Op, 0, lines)
		return nil
	}, func(_ int, op *Op) error {
		h.Ops = append(h.Ops, *op)
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(h.Ops) == 0 {
		h.Ops = nil
	}
	return h, nil
}

// CountLines counts the newlines of the file at path: for a history in
// Save's shape, its operations and four lines more.
func CountLines(path string) (int, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, fmt.Errorf("read history: %w", err)
	}
	defer f.Close()
	buf := make([]byte, 1<<20)
	n := 0
	for {
		k, err := f.Read(buf)
		n += bytes.Count(buf[:k], []byte{'\n'})
		if err == io.EOF {
			return n, nil
		}
		if err != nil {
			return 0, fmt.Errorf("read history: %w", err)
		}
	}
}

// Scan reads the history at path without keeping its operations: head
// gets everything else (format, meta, scenario, every fault window) once,
// before each gets the operations in file order with their index. A file
// in Save's shape is read a line at a time, so a history of any length
// needs the memory of one line; other JSON with the history's fields is
// decoded whole first. A newer format than this build reads is refused.
func Scan(path string, head func(*History) error, each func(i int, op *Op) error) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("read history: %w", err)
	}
	defer f.Close()
	r := bufio.NewReaderSize(f, 1<<20)
	h, lines, err := readHead(r)
	if err == nil && h == nil { // not Save's shape
		if _, err = f.Seek(0, io.SeekStart); err == nil {
			h, err = decode(json.NewDecoder(bufio.NewReaderSize(f, 1<<20)))
		}
	}
	if err != nil {
		return fmt.Errorf("decode history %s: %w", path, err)
	}
	if h.Format > Format {
		return fmt.Errorf("history %s has format %d; this lockcheck reads up to %d: use a newer lockcheck", path, h.Format, Format)
	}
	ops := h.Ops
	h.Ops = nil
	if err := head(h); err != nil {
		return err
	}
	if !lines {
		for i := range ops {
			if err := each(i, &ops[i]); err != nil {
				return err
			}
		}
		return nil
	}
	if err := scanOpLines(r, each); err != nil {
		return fmt.Errorf("decode history %s: %w", path, err)
	}
	return nil
}

// readHead reads the first two lines of a file in Save's shape: the head
// object left open, then the start of the operations' array. It returns
// nil, false, nil for any other shape; lines says the operations follow,
// one per line (false: "ops" is null and the file is read).
func readHead(r *bufio.Reader) (*History, bool, error) {
	line, err := r.ReadSlice('\n')
	if err != nil || len(line) < 3 || line[0] != '{' {
		return nil, false, nil
	}
	line = bytes.TrimRight(line, "\n")
	if line[len(line)-1] != ',' {
		return nil, false, nil
	}
	var h History
	head := append(append([]byte(nil), line[:len(line)-1]...), '}')
	if json.Unmarshal(head, &h) != nil {
		return nil, false, nil
	}
	second, err := r.ReadSlice('\n')
	if err != nil && err != io.EOF {
		return nil, false, nil
	}
	switch string(bytes.TrimRight(second, "\n")) {
	case `"ops": [`:
		return &h, true, nil
	case `"ops": null}`:
		return &h, false, nil
	}
	return nil, false, nil
}

// scanOpLines reads the operations' lines Save writes: an operation per
// line, each after the first led by a comma, then "]}".
func scanOpLines(r *bufio.Reader, each func(i int, op *Op) error) error {
	var op Op
	for i := 0; ; i++ {
		line, err := r.ReadBytes('\n')
		line = bytes.TrimRight(line, "\n")
		if err == io.EOF && len(line) == 0 {
			return errors.New("cut short: the operations' array does not end")
		} else if err != nil && err != io.EOF {
			return err
		}
		if string(line) == "]}" {
			return nil
		}
		if i > 0 {
			if len(line) == 0 || line[0] != ',' {
				return fmt.Errorf("op %d: want a comma before it", i)
			}
			line = line[1:]
		}
		if err := decodeOp(line, &op); err != nil {
			return fmt.Errorf("op %d: %w", i, err)
		}
		if err := each(i, &op); err != nil {
			return err
		}
	}
}

// decode reads a history of any JSON shape at once (the fallback).
func decode(dec *json.Decoder) (*History, error) {
	var h History
	if err := delim(dec, '{'); err != nil {
		return nil, err
	}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, err
		}
		switch t {
		case "format":
			err = dec.Decode(&h.Format)
		case "meta":
			err = dec.Decode(&h.Meta)
		case "scenario":
			err = dec.Decode(&h.Scenario)
		case "faults":
			err = dec.Decode(&h.Faults)
		case "ops":
			h.Ops, err = decodeOps(dec)
		default:
			var skip json.RawMessage
			err = dec.Decode(&skip)
		}
		if err != nil {
			return nil, fmt.Errorf("%v: %w", t, err)
		}
	}
	if err := delim(dec, '}'); err != nil {
		return nil, err
	}
	return &h, nil
}

// decodeOps reads the operations' array.
func decodeOps(dec *json.Decoder) ([]Op, error) {
	if t, err := dec.Token(); err != nil || t == nil {
		return nil, err // null
	} else if d, ok := t.(json.Delim); !ok || d != '[' {
		return nil, fmt.Errorf("want an array, got %v", t)
	}
	var ops []Op
	for dec.More() {
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, fmt.Errorf("op %d: %w", len(ops), err)
		}
		var op Op
		if err := decodeOp(raw, &op); err != nil {
			return nil, fmt.Errorf("op %d: %w", len(ops), err)
		}
		ops = append(ops, op)
	}
	return ops, delim(dec, ']')
}

func delim(dec *json.Decoder, want json.Delim) error {
	t, err := dec.Token()
	if err != nil {
		return err
	}
	if d, ok := t.(json.Delim); !ok || d != want {
		return errors.New("malformed: want " + want.String() + ", got " + fmt.Sprint(t))
	}
	return nil
}
