package shrink

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/lockcheck/lockcheck/reports"
	"github.com/lockcheck/lockcheck/scenarios"
)

// Input is a violated run's folder read and checked for a shrink.
type Input struct {
	// Kind is the finding kind the shrink keeps.
	Kind string
	// Scenario is the run's.
	Scenario scenarios.Scenario
	result   reports.RunResult
	pinned   scenarios.Scenario
}

// LoadInput reads and checks the run in from that a shrink would cut,
// and the finding kind it would keep (kind, or when "" the run's
// double_holder or else its first failing kind): all of it needs no
// engine, so a folder that is not a violated run is refused before one
// is contacted.
func LoadInput(from, kind string) (*Input, error) {
	if _, err := os.Lstat(filepath.Join(from, scenarios.TraceFileName)); err == nil {
		return nil, fmt.Errorf("%s holds a script (%s), a shrink's reproducer: play it with lockcheck replay %s", from, scenarios.TraceFileName, from)
	}
	f, err := scenarios.LoadRunFile(filepath.Join(from, scenarios.RunFileName))
	if err != nil {
		return nil, notRun(err)
	}
	if f.Scenario, err = f.Scenario.Resolve(); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(from, scenarios.RunFileName), err)
	}
	orig, err := reports.LoadRunResult(filepath.Join(from, "result.json"))
	if err != nil {
		return nil, notRun(err)
	}
	kinds := orig.Checks.FailingKinds()
	if len(kinds) == 0 {
		return nil, fmt.Errorf("%s has no failing finding (verdict %s): shrink a violated run", from, orig.Verdict)
	}
	if kind == "" {
		kind = kinds[0]
		if slices.Contains(kinds, "double_holder") {
			kind = "double_holder"
		}
	} else if !slices.Contains(kinds, kind) {
		return nil, fmt.Errorf("%s shows %v, not %s: choose one of those with --kind", from, kinds, kind)
	}
	pinned, err := Pinned(f.Scenario)
	if err != nil {
		return nil, err
	}
	return &Input{Kind: kind, Scenario: f.Scenario, result: orig, pinned: pinned}, nil
}

// notRun says what to give instead of a folder that lacks a run's file;
// a file that is there but bad says what is wrong in it already.
func notRun(err error) error {
	if errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("%w: give the folder of a violated run (lockcheck run or matrix wrote it)", err)
	}
	return err
}
