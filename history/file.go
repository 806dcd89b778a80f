package history

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"unique"
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
	if _, err := io.WriteString(w, "["); err != nil {
		return err
	}
	enc := json.NewEncoder(w) // one operation per line, newline-terminated
	for i := range h.Ops {
		if i > 0 {
			if _, err := io.WriteString(w, ","); err != nil {
				return err
			}
		} else if _, err := io.WriteString(w, "\n"); err != nil {
			return err
		}
		if err := enc.Encode(&h.Ops[i]); err != nil {
			return err
		}
	}
	_, err = io.WriteString(w, "]}\n")
	return err
}

// Load reads a history written by Save (or any JSON with its fields). It
// decodes an operation at a time and keeps one copy of each key, kind and
// outcome text, so that memory holds the operations, not the file.
func Load(path string) (*History, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read history: %w", err)
	}
	defer f.Close()
	h, err := decode(json.NewDecoder(bufio.NewReaderSize(f, 1<<20)))
	if err != nil {
		return nil, fmt.Errorf("decode history %s: %w", path, err)
	}
	if h.Format > Format {
		return nil, fmt.Errorf("history %s has format %d; this lockcheck reads up to %d: use a newer lockcheck", path, h.Format, Format)
	}
	return h, nil
}

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

// decodeOps reads the operations' array, sharing repeated texts.
func decodeOps(dec *json.Decoder) ([]Op, error) {
	if t, err := dec.Token(); err != nil || t == nil {
		return nil, err // null
	} else if d, ok := t.(json.Delim); !ok || d != '[' {
		return nil, fmt.Errorf("want an array, got %v", t)
	}
	var ops []Op
	for dec.More() {
		var op Op
		if err := dec.Decode(&op); err != nil {
			return nil, fmt.Errorf("op %d: %w", len(ops), err)
		}
		op.Key = unique.Make(op.Key).Value()
		op.Kind = Kind(unique.Make(string(op.Kind)).Value())
		op.Outcome = Outcome(unique.Make(string(op.Outcome)).Value())
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
