package reports

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/lockcheck/lockcheck/history/historyjson"
)

// WriteJSON writes v, indented and newline-terminated, to path: the one
// way every JSON file of a report is written, so that all read alike and
// an error names the file.
func WriteJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("encode %s: %w", filepath.Base(path), err)
	}
	if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("write %s: %w", filepath.Base(path), err)
	}
	return nil
}

// ReadJSON reads path into v; an error names the file, and in it the
// line and column and what was expected there.
func ReadJSON(path string, v any) error {
	jf, err := historyjson.ReadJSONFile(path)
	if err != nil {
		return err
	}
	return jf.Decode(v)
}
