package reports

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/lockcheck/lockcheck/checker"
	"github.com/lockcheck/lockcheck/history"
)

// WriteRun writes a checked run's result.json, junit.xml, report.html and
// linearizability.html into out.
func WriteRun(out string, h *history.History, result *checker.Result, rr RunResult) error {
	if err := rr.Save(filepath.Join(out, "result.json")); err != nil {
		return err
	}
	var j JUnit
	j.Name = "lockcheck"
	j.Add(rr.Suite(fmt.Sprintf("%s %s %s %s", rr.Server, rr.Topology, rr.Client, strings.Join(rr.Faults, "+"))))
	if err := j.Write(filepath.Join(out, "junit.xml")); err != nil {
		return err
	}
	return WriteReport(out, h, result, rr.Replay)
}
