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

	"github.com/lockcheck/lockcheck/checker"
	"github.com/lockcheck/lockcheck/harness"
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
// folder: reading
// history.json, every check, and writing result.json and the pictures,
// each step in a child process of its own so that its peak memory is its
// own.
func (b *bench) recheckSection(ctx context.Context) error {
	// a tenth first: the size the goal of 3 s and 300 MB was set for
	for _, n := range []int{b.cfg.checkOps / 10, b.cfg.checkOps} {
		if err := b.recheckSize(ctx, n); err != nil {
			return err
		}
	}
	return nil
}

// recheckSize measures the check of one generated history of n operations.
func (b *bench) recheckSize(ctx context.Context, n int) error {
	name := fmt.Sprintf("lockcheck check of a %s-operation history, end to end", count(n))
	dir, err := os.MkdirTemp("", "lockcheck-bench-recheck-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	gen, err := runChild(ctx, 0, "-child", "generate", "-child-ops", strconv.Itoa(n), "-child-dir", dir, "-checker-keys", strconv.Itoa(b.cfg.checkerKeys))
	if err != nil {
		b.add(Row{Name: name, Unit: "s", section: secChecker, Note: "not measured: generating the history failed: " + err.Error()})
		return err
	}
	size := int64(0)
	if fi, err := os.Stat(filepath.Join(dir, "history.json")); err == nil {
		size = fi.Size()
	}
	cr, err := runChild(ctx, 0, "-child", "recheck", "-child-dir", dir)
	var r recheckReport
	if err == nil {
		err = json.Unmarshal(cr.Stdout, &r)
	}
	if err != nil {
		b.add(Row{Name: name, Unit: "s", section: secChecker, Note: "not measured: " + err.Error()})
		return err
	}
	b.log.Info("recheck", "ops", r.Ops, "seconds", r.Seconds, "peak_mib", r.PeakRSS>>20)
	b.add(Row{Name: name, Unit: "s", Value: num(r.Seconds), Runs: 1, section: secChecker,
		Reference: "peak RSS of the process, MiB", ReferenceValue: num(float64(r.PeakRSS) / (1 << 20)),
		Note: fmt.Sprintf("harness.Recheck (what lockcheck check DIR runs: checker.RunFile, a group of keys at a time) in a process of its own: history.json of %d MiB (%d operations over %d keys from checker.Generate), every check, result.json, report.html and linearizability.html; verdict %s; generating and saving the history took %s in another process",
			size>>20, r.Ops, b.cfg.checkerKeys, r.Verdict, gen.Elapsed.Round(time.Second))})
	return nil
}

// generateChild writes a generated legal history of cfg.ops operations as
// a run folder's history.json.
func generateChild(cfg config) error {
	h := checker.Generate(1, cfg.ops, cfg.checkerKeys, 5*cfg.checkerKeys)
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
