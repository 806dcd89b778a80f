package harness

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/lockcheck/lockcheck/history"
)

// SafeName makes s usable in a file name.
func SafeName(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '.' {
			return r
		}
		return '_'
	}, s)
}

// quoteArg quotes a command-line argument that a shell would split.
func quoteArg(s string) string {
	if s != "" && !strings.ContainsAny(s, " \t'\"\\$`") {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// keepHistory saves h as OUT/histories/NAME for a measurement's run worth
// a look, and returns the path the measurement's report names ("" when it
// could not be saved: the figure loses nothing, and log says why).
func keepHistory(out, name string, h *history.History, log io.Writer) string {
	rel := filepath.Join("histories", name)
	path := filepath.Join(out, rel)
	err := os.MkdirAll(filepath.Dir(path), 0o755)
	if err == nil {
		err = h.Save(path)
	}
	if err != nil {
		fmt.Fprintf(log, "keep the history %s: %v\n", path, err)
		return ""
	}
	return rel
}
