package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/lockcheck/lockcheck/harness"
	"github.com/lockcheck/lockcheck/history/synth"
)

// recheckReport is what the recheck child measured about itself.
type recheckReport struct {
	Ops     int     `json:"ops"`
	Seconds float64 `json:"seconds"`
	PeakRSS int64   `json:"peak_rss"`
	Verdict string  `json:"verdict"`
}

// recheckSection measures lockcheck check end to end on generated
// histories of -check-ops operations and a tenth of that, saved as a run
// folder: reading history.json, every check, and writing result.json and
// the pictures, each step in a child process of its own so that its peak
// memory is its own. Each history is checked twice: as lockcheck writes
// it (an operation per line) and indented as jq . writes it, the layout
// of a history another tool wrote or a user reformatted.
func (b *bench) recheckSection(ctx context.Context) error {
	// a tenth first: the size the goal of 3 s and 300 MB was set for
	for _, n := range []int{b.cfg.checkOps / 10, b.cfg.checkOps} {
		if err := b.recheckSize(ctx, n); err != nil {
			return err
		}
	}
	return nil
}

// recheckSize measures the check of one generated history of n
// operations, in lockcheck's layout and indented.
func (b *bench) recheckSize(ctx context.Context, n int) error {
	name := fmt.Sprintf("lockcheck check of a %s-operation history, end to end", count(n))
	indentedName := fmt.Sprintf("lockcheck check of a %s-operation history indented as jq . writes it, end to end", count(n))
	notMeasured := func(name, why string, err error) error {
		b.add(Row{Name: name, Unit: "s", section: secChecker, Note: "not measured: " + why + err.Error()})
		return err
	}
	tmp, err := os.MkdirTemp("", "lockcheck-bench-recheck-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	lines, indented := filepath.Join(tmp, "lines"), filepath.Join(tmp, "indented")
	for _, d := range []string{lines, indented} {
		if err := os.Mkdir(d, 0o755); err != nil {
			return err
		}
	}
	gen, err := runChild(ctx, 0, "-child", "generate", "-child-ops", strconv.Itoa(n), "-child-dir", lines, "-checker-keys", strconv.Itoa(b.cfg.checkerKeys))
	if err != nil {
		return notMeasured(name, "generating the history failed: ", err)
	}
	r, err := b.recheck(ctx, lines)
	if err != nil {
		return notMeasured(name, "", err)
	}
	b.add(r.row(name, fmt.Sprintf("history.json of %d MiB (%d operations over %d keys from synth.Generate, saved by History.Save: an operation per line); verdict %s; generating and saving it took %s in another process",
		fileSize(filepath.Join(lines, "history.json"))>>20, r.Ops, b.cfg.checkerKeys, r.Verdict, gen.Elapsed.Round(time.Second))))

	begin := time.Now()
	if err := indentHistory(filepath.Join(lines, "history.json"), filepath.Join(indented, "history.json")); err != nil {
		return notMeasured(indentedName, "indenting the history failed: ", err)
	}
	took := time.Since(begin)
	ri, err := b.recheck(ctx, indented)
	if err != nil {
		return notMeasured(indentedName, "", err)
	}
	b.add(ri.row(indentedName, fmt.Sprintf("the row above's history indented as jq . writes it (two spaces, a member or element a line): history.json of %d MiB, written in %s; verdict %s; %.2fx the time and %.2fx the peak memory of lockcheck's own layout in this run",
		fileSize(filepath.Join(indented, "history.json"))>>20, took.Round(time.Second), ri.Verdict, ri.Seconds/r.Seconds, float64(ri.PeakRSS)/float64(r.PeakRSS))))
	return nil
}

// recheck checks the run folder dir in a child process, as lockcheck
// check does.
func (b *bench) recheck(ctx context.Context, dir string) (recheckReport, error) {
	var r recheckReport
	cr, err := runChild(ctx, 0, "-child", "recheck", "-child-dir", dir)
	if err == nil {
		err = json.Unmarshal(cr.Stdout, &r)
	}
	if err == nil {
		b.log.Info("recheck", "dir", dir, "ops", r.Ops, "seconds", r.Seconds, "peak_mib", r.PeakRSS>>20)
	}
	return r, err
}

// row is the table's row of a recheck.
func (r recheckReport) row(name, note string) Row {
	return Row{Name: name, Unit: "s", Value: num(r.Seconds), Runs: 1, section: secChecker,
		Reference: "peak RSS of the process, MiB", ReferenceValue: num(float64(r.PeakRSS) / (1 << 20)),
		Note: "harness.Recheck (what lockcheck check DIR runs: checker.RunFile, a group of keys at a time) in a process of its own: every check, result.json, report.html and linearizability.html; " + note}
}

func fileSize(path string) int64 {
	fi, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return fi.Size()
}

// generateChild writes a generated legal history of cfg.ops operations as
// a run folder's history.json.
func generateChild(cfg config) error {
	h := synth.Generate(1, cfg.ops, cfg.checkerKeys, 5*cfg.checkerKeys)
	return h.Save(filepath.Join(cfg.dir, "history.json"))
}

// recheckChild checks the folder again as lockcheck check does and says
// how long it took and its own peak memory.
func recheckChild(ctx context.Context, cfg config, out io.Writer) error {
	begin := time.Now()
	rc, err := harness.Recheck(ctx, cfg.dir, nil)
	if err != nil {
		return err
	}
	r := recheckReport{Ops: rc.Check.Ops, Seconds: time.Since(begin).Seconds(), Verdict: string(rc.Check.Verdict)}
	if r.PeakRSS, err = statusBytes("self", "VmHWM"); err != nil {
		return err
	}
	return json.NewEncoder(out).Encode(r)
}
