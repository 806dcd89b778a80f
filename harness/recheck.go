package harness

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/lockcheck/lockcheck/checker"
	"github.com/lockcheck/lockcheck/history"
	"github.com/lockcheck/lockcheck/reports"
	"github.com/lockcheck/lockcheck/scenarios"
)

// Rechecked is what checking a run folder again gave.
type Rechecked struct {
	History *history.History
	Check   *checker.Result
	Result  reports.RunResult
}

// Recheck checks a run folder again, offline: DIR/history.json, or from a
// run killed before it wrote one, DIR/ops.jsonl (the history is then
// marked partial), with the run's own settings from DIR/scenario.json;
// adjust, when set, changes the options after that. It rewrites
// result.json, junit.xml, report.html and linearizability.html, keeping
// the notes of the run's result.json.
func Recheck(ctx context.Context, dir string, adjust func(*checker.Options)) (*Rechecked, error) {
	h, err := history.Load(filepath.Join(dir, "history.json"))
	if errors.Is(err, os.ErrNotExist) {
		h, err = history.LoadStream(filepath.Join(dir, history.StreamName))
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("%s has no history.json and no %s: give the folder lockcheck run wrote (runs/...)", dir, history.StreamName)
		}
	}
	if err != nil {
		return nil, err
	}
	opts := checker.OptionsFor(h)
	replay := ""
	if f, err := scenarios.LoadRunFile(filepath.Join(dir, scenarios.RunFileName)); err == nil {
		opts, replay = CheckOptions(h, f.Scenario), ReplayCommand(dir)
	} else if !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	if adjust != nil {
		adjust(&opts)
	}
	res, err := checker.Run(ctx, h, opts)
	if err != nil {
		return nil, fmt.Errorf("%v: fix or re-record %s", err, filepath.Join(dir, "history.json"))
	}
	var notes []string
	if old, err := reports.LoadRunResult(filepath.Join(dir, "result.json")); err == nil {
		notes = old.Notes
	}
	rr := reports.NewRunResult(h, res, notes)
	rr.Replay = replay
	if err := WriteFiles(dir, h, res, rr); err != nil {
		return nil, err
	}
	return &Rechecked{History: h, Check: res, Result: rr}, nil
}
