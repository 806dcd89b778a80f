package reports

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/lockcheck/lockcheck/measure"
)

// ShrinkFiguresFile is the shrink figures' table (lockcheck
// shrink-figures): not shrink.json, which is one shrink's summary in its
// reproducer's folder, so that a folder is known for what it holds.
const ShrinkFiguresFile = "shrink-figures.json"

// ShrinkFigures is the shrink figures' measurement: every violated run
// given, shrunk with the same bounds, a row each in the runs' sorted
// order, with the machine the shrinks ran on.
type ShrinkFigures struct {
	// Budget, Tries and Confirm bound every shrink (lockcheck shrink's
	// flags of those names).
	Budget   string    `json:"budget"`
	Tries    int       `json:"tries"`
	Confirm  int       `json:"confirm"`
	Started  time.Time `json:"started"`
	Elapsed  Millis    `json:"elapsed_ms"`
	Machine  string    `json:"machine"`
	Complete bool      `json:"complete"`
	Rows     []Shrunk  `json:"rows"`
	// Part, in a shard's file (--shard I/N), says which part of the plan
	// it holds, for lockcheck merge; a whole measurement's file has none.
	measure.Part
}

// WriteShrinkFigures writes shrink-figures.json and shrink-figures.md
// into dir.
func WriteShrinkFigures(dir string, sf *ShrinkFigures) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("shrink-figures folder: %w", err)
	}
	if err := WriteJSON(filepath.Join(dir, ShrinkFiguresFile), sf); err != nil {
		return err
	}
	var md strings.Builder
	ShrinkFiguresMarkdown(&md, sf)
	if err := os.WriteFile(filepath.Join(dir, "shrink-figures.md"), []byte(md.String()), 0o644); err != nil {
		return fmt.Errorf("write shrink-figures.md: %w", err)
	}
	return nil
}

// ShrinkFiguresMarkdown renders the measurement: how and where it was
// measured, then the table of shrinks (ShrinkMarkdown).
func ShrinkFiguresMarkdown(w io.Writer, sf *ShrinkFigures) {
	state := "complete"
	if !sf.Complete {
		state = "interrupted: partial figures"
	}
	fmt.Fprintf(w, "%d violated runs shrunk, each within %s (%d tries per cut, %d confirming replays), measured %s in %s (%s); %s.\n\n",
		len(sf.Rows), sf.Budget, sf.Tries, sf.Confirm, sf.Started.UTC().Format("2006-01-02 15:04 UTC"), sf.Elapsed, sf.Machine, state)
	fmt.Fprint(w, ShrinkMarkdown(sf.Rows))
}

// Line is a shrink in one line, for a measurement's progress.
func (s Shrunk) Line() string {
	after := "none kept"
	if s.Command != "" {
		after = fmt.Sprintf("%d operations (%.1fx fewer)", s.After.Ops, s.Ratio())
	}
	return fmt.Sprintf("%s: %s, %d operations -> %s, reproduced %d of %d; %s", s.From, s.Kind, s.Before.Ops, after, s.Reproduced, s.Runs, s.Ended)
}
