package harness

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/lockcheck/lockcheck/history"
	"github.com/lockcheck/lockcheck/history/historyjson"
	"github.com/lockcheck/lockcheck/reports"
	"github.com/lockcheck/lockcheck/scenarios"
)

// runMarks are the files that make a folder a run's: its scenario, its
// history (whole or streamed), its result, a shrink's script.
var runMarks = []string{scenarios.RunFileName, "history.json", history.StreamName, "result.json", scenarios.TraceFileName}

// runFiles are every file and folder a run, a check, a replay, a shrink or
// an import writes into a run's folder: what a new history makes stale.
var runFiles = append(append([]string(nil), runMarks...), "junit.xml", "report.html", "linearizability.html", "verdict.txt", "run.log", reports.ShrinkFileName, "nodes", "tries")

// HoldsRun names the file that makes dir a run's folder, "" when none
// does.
func HoldsRun(dir string) string {
	for _, name := range runMarks {
		if _, err := os.Lstat(filepath.Join(dir, name)); err == nil {
			return name
		}
	}
	return ""
}

// ClaimOut readies dir for a new run's files, before anything is spent
// on the run. A missing folder is made later; a path that is not a folder
// is refused; so is a folder that holds a run, unless force, which removes
// the files that run left (its result, reports, logs), so that none is
// taken for the new one's: a new history.json beside an old result.json
// would show a verdict that is not its own.
func ClaimOut(dir string, force bool) error {
	if err := CheckOut(dir, force); err != nil || HoldsRun(dir) == "" {
		return err
	}
	for _, name := range runFiles {
		if err := os.RemoveAll(filepath.Join(dir, name)); err != nil {
			return fmt.Errorf("--force: %w", err)
		}
	}
	return nil
}

// CheckOut is ClaimOut that removes nothing: whether dir could be claimed.
func CheckOut(dir string, force bool) error {
	if dir == "" {
		return nil
	}
	fi, err := os.Stat(dir)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return nil
	case err != nil:
		return fmt.Errorf("%s: give a folder to write into", historyjson.PathProblem(dir, err))
	case !fi.IsDir():
		return fmt.Errorf("%s is a file, not a folder: give a folder to write into (it is made when missing)", dir)
	}
	if mark := HoldsRun(dir); mark != "" && !force {
		return fmt.Errorf("%s holds a run (%s): give a new folder, or --force to replace that run's files", dir, mark)
	}
	return nil
}
