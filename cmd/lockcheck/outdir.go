package main

import (
	"fmt"
	"os"

	"github.com/lockcheck/lockcheck/harness"
)

// claimParent checks the folder that gets one subfolder per run (run
// --repeat, replay --count): not a file, not a run's own folder, whose
// files the subfolders would sit among.
func claimParent(dir string) error {
	if dir == "" {
		return nil
	}
	if fi, err := os.Stat(dir); err == nil && !fi.IsDir() {
		return fmt.Errorf("%s is a file, not a folder: give a folder to write into (it is made when missing)", dir)
	}
	if mark := harness.HoldsRun(dir); mark != "" {
		return fmt.Errorf("%s holds a run (%s), not runs in subfolders: give a new folder", dir, mark)
	}
	return nil
}

// claimReplayOut checks replay's --out: one replay's folder, or with
// --count the folder of their subfolders.
func claimReplayOut(out string, count int, force bool) error {
	if count > 1 {
		return claimParent(out)
	}
	return harness.ClaimOut(out, force)
}
