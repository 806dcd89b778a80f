package main

import (
	"fmt"
	"os"

	"github.com/lockcheck/lockcheck/history/historyjson"
)

// runFolder checks that dir, a run folder a command reads, is a folder at
// all: a missing path, a file or a loop of links is named as such, not as
// a file missing inside it.
func runFolder(dir, what string) error {
	fi, err := os.Stat(dir)
	switch {
	case err != nil:
		return fmt.Errorf("%s: give %s", historyjson.PathProblem(dir, err), what)
	case !fi.IsDir():
		return fmt.Errorf("%s is a file, not a folder: give %s", dir, what)
	}
	return nil
}
