package history

import (
	"bufio"
	"encoding/json"
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
