package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"

	"github.com/lockcheck/lockcheck/history"
	"github.com/lockcheck/lockcheck/history/historyjson"
)

// indentHistory writes the history at src to dst as jq . lays it out:
// two spaces of indentation, a member or array element a line, members
// in the file's order (Save's: format, meta, scenario, faults, ops). It
// reads src twice, the head first, so that a history of any length is
// rewritten in the memory of one operation: jq itself holds the whole
// document (the 10M-operation history is 1.5 GB).
func indentHistory(src, dst string) (err error) {
	head, err := historyjson.Scan(src, func(int, *history.Op) error { return nil })
	if err != nil {
		return err
	}
	f, err := os.Create(dst)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}()
	w := bufio.NewWriterSize(f, 1<<20)
	w.WriteString("{\n")
	member := func(name string, v any) error {
		b, err := json.MarshalIndent(v, "  ", "  ")
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "  %q: %s,\n", name, b)
		return nil
	}
	if head.Format != 0 {
		member("format", head.Format)
	}
	member("meta", head.Meta)
	if len(head.Scenario) > 0 {
		if err := member("scenario", head.Scenario); err != nil {
			return err
		}
	}
	member("faults", head.Faults)
	w.WriteString(`  "ops": [`)
	n := 0
	if _, err := historyjson.Scan(src, func(i int, op *history.Op) error {
		b, err := json.MarshalIndent(op, "    ", "  ")
		if i > 0 {
			w.WriteByte(',')
		}
		w.WriteString("\n    ")
		w.Write(b)
		n++
		return err
	}); err != nil {
		return err
	}
	if n > 0 {
		w.WriteString("\n  ")
	}
	w.WriteString("]\n}\n")
	return w.Flush()
}
