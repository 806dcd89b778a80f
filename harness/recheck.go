package harness

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/lockcheck/lockcheck/checker"
	"github.com/lockcheck/lockcheck/history"
	"github.com/lockcheck/lockcheck/history/historyjson"
	"github.com/lockcheck/lockcheck/reports"
	"github.com/lockcheck/lockcheck/scenarios"
)

// Rechecked is what checking a run folder again gave.
type Rechecked struct {
	// History is the whole history when it was small enough to load, else
	// its head (meta, faults; no operations): Check.Ops counts them.
	History *history.History
	Check   *checker.Result
	Result  reports.RunResult
	// Dir is the folder the reports went to: the run's, or the history
	// file's.
	Dir string
}

// Recheck checks a run folder again, offline: DIR/history.json, or from a
// run killed before it wrote one, DIR/ops.jsonl (the history is then
// marked partial), with the run's own settings from DIR/scenario.json;
// adjust, when set, changes the options after that. It rewrites
// result.json, junit.xml, report.html and linearizability.html, keeping
// the notes of the run's result.json.
//
// target may also be a history file (history.json, or ops.jsonl), which
// is checked with the settings of the folder it is in, where the reports
// go.
func Recheck(ctx context.Context, target string, adjust func(*checker.Options)) (*Rechecked, error) {
	dir, file, err := recheckTarget(target)
	if err != nil {
		return nil, err
	}
	replay, tolerance := "", time.Duration(-1)
	if f, err := scenarios.LoadRunFile(filepath.Join(dir, scenarios.RunFileName)); err == nil {
		// an older folder's scenario may no longer validate: its
		// tolerance still counts
		s, _ := f.Scenario.Resolve()
		replay, tolerance = scenarios.ReplayCommand(dir), s.ClockTolerance
	} else if !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	options := func(o *checker.Options) {
		if tolerance >= 0 {
			o.ClockTolerance = tolerance
		}
		if adjust != nil {
			adjust(o)
		}
	}
	path := filepath.Join(dir, "history.json")
	if file != "" {
		path = file
	}
	// history.json is checked a group of keys at a time, its operations
	// never all in memory; a killed run's stream is loaded whole.
	var res *checker.Result
	var h *history.History
	if filepath.Base(file) == history.StreamName {
		err = os.ErrNotExist // the stream itself was named
	} else {
		res, h, err = checker.RunFile(ctx, path, options)
	}
	if errors.Is(err, os.ErrNotExist) && (file == "" || filepath.Base(file) == history.StreamName) {
		h, err = historyjson.LoadStream(filepath.Join(dir, history.StreamName))
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("%s has no history.json and no %s: give the folder lockcheck run wrote (runs/...)", dir, history.StreamName)
		}
		if err != nil {
			return nil, err
		}
		path = filepath.Join(dir, history.StreamName)
		opts := checker.OptionsFor(h)
		options(&opts)
		res, err = checker.Run(ctx, h, opts)
	}
	if errors.Is(err, historyjson.ErrUnreadable) {
		return nil, err
	}
	if err != nil {
		return nil, fmt.Errorf("%v: fix or re-record %s", err, path)
	}
	var notes []string
	if old, err := reports.LoadRunResult(filepath.Join(dir, "result.json")); err == nil {
		notes = old.Notes
	}
	rr := reports.NewRunResult(h, res, notes)
	rr.Replay = replay
	if err := reports.WriteRun(dir, h, res, rr); err != nil {
		return nil, err
	}
	return &Rechecked{History: h, Check: res, Result: rr, Dir: dir}, nil
}

// recheckTarget says which folder target is, and which history file when
// target names one ("" for the folder's own).
func recheckTarget(target string) (dir, file string, err error) {
	fi, err := os.Stat(target)
	switch {
	case err != nil:
		return "", "", fmt.Errorf("%s: give a run folder or a history file (history.json)", historyjson.PathProblem(target, err))
	case fi.IsDir():
		return target, "", nil
	case !fi.Mode().IsRegular():
		return "", "", fmt.Errorf("%s is not a regular file or a folder: give a run folder or a history file (history.json)", target)
	}
	return filepath.Dir(target), target, nil
}
