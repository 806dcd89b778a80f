package scenarios

import (
	"fmt"
	"path/filepath"
	"strings"
	"time"
)

// Folder is where a run of the resolved s writes when it is given no
// folder: runs/<time>-<server>-<topology>-<client>-<seed>, the time now's.
func (s Scenario) Folder(now time.Time) string {
	return filepath.Join("runs", fmt.Sprintf("%s-%s-%s-%s-%d", now.Format("20060102-150405"), s.Server, s.Topology, SafeName(s.Client), s.Seed))
}

// ReplayCommand is the command that runs a folder's scenario (or trace)
// again: what scenario.json's replay and result.json show.
func ReplayCommand(dir string) string { return "lockcheck replay " + quoteArg(dir) }

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
