package harness

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/lockcheck/lockcheck/checker"
	"github.com/lockcheck/lockcheck/history"
	"github.com/lockcheck/lockcheck/reports"
)

// WriteFiles writes a checked run's result.json, junit.xml, report.html and
// linearizability.html into out.
func WriteFiles(out string, h *history.History, result *checker.Result, rr reports.RunResult) error {
	if err := rr.Save(filepath.Join(out, "result.json")); err != nil {
		return err
	}
	var j reports.JUnit
	j.Name = "lockcheck"
	j.Add(rr.Suite(fmt.Sprintf("%s %s %s %s", rr.Server, rr.Topology, rr.Client, strings.Join(rr.Faults, "+"))))
	if err := j.Write(filepath.Join(out, "junit.xml")); err != nil {
		return err
	}
	return reports.WriteReport(out, h, result, rr.Replay)
}

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
