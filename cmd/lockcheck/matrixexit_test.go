package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/lockcheck/lockcheck/checker"
	"github.com/lockcheck/lockcheck/reports"
)

// With --expect, a matrix exits by the expectation of every run alone.
func TestMatrixExitExpect(t *testing.T) {
	cell := func(client string, o reports.CellOutcome, class checker.Class, fenced bool) reports.IndexCell {
		v := checker.Safe
		if class == checker.ClassViolated {
			v = checker.Violated
		}
		return reports.IndexCell{Server: "valkey-9.1", Topology: "sentinel", Client: client, Fault: "kill-primary", Outcome: o,
			Verdict: v, Class: class, Fenced: fenced, Summary: string(class), Link: client + "/report.html"}
	}
	idx := &reports.Index{Complete: true, Cells: []reports.IndexCell{
		cell("fenced", reports.CellFenced, checker.ClassFenced, true),
		{Server: "valkey-8.0", Topology: "sentinel", Client: "fenced", Fault: "kill-primary", Outcome: reports.CellNA},
	}}
	var stderr bytes.Buffer
	if code := matrixExit(idx, "out", checker.ExpectFenceHolds, &stderr); code != 0 {
		t.Errorf("fence-holds on a fenced cell: exit %d (%s)", code, stderr.String())
	}
	if code := matrixExit(idx, "out", checker.ExpectSafe, &stderr); code != 1 || !strings.Contains(stderr.String(), "expected safe, got fenced") {
		t.Errorf("safe on a fenced cell: exit %d (%s)", code, stderr.String())
	}
	idx.Cells = append(idx.Cells, cell("native", reports.CellViolated, checker.ClassViolated, false))
	stderr.Reset()
	if code := matrixExit(idx, "out", checker.ExpectFenceHolds, &stderr); code != 1 || !strings.Contains(stderr.String(), "native on valkey-9.1 sentinel under kill-primary: expected fence-holds, but the client draws no fences") {
		t.Errorf("fence-holds on an unfenced cell: exit %d (%s)", code, stderr.String())
	}
}
