package tables

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/lockcheck/lockcheck/measure"
	"github.com/lockcheck/lockcheck/reports"
)

// tableFiles are the files a measurement's folder is known by, and the
// merge of each: the shards' files read from their folders, joined, and
// written into out, with the table's Markdown on w.
var tableFiles = []struct {
	file  string
	merge func(dirs []string, file, out string, w io.Writer) error
}{
	{"catch-rate.json", mergeCatchRate},
	{"false-alarms.json", mergeFalseAlarms},
	{reports.TableClaims + ".json", mergeClaims},
	{reports.TableMitigations + ".json", mergeClaims},
	{reports.TableMigrations + ".json", mergeClaims},
	{reports.TableReportCard + ".json", mergeClaims},
	{reports.ShrinkFiguresFile, mergeShrinkFigures},
}

// Resumable says whether the measurement whose table file is file can
// go on from where it stopped (--resume): the seeded measurements'
// (catch-rate, false-alarms, the claims family), not shrink-figures.
func Resumable(file string) bool {
	return file != "" && file != reports.ShrinkFiguresFile
}

// MeasurementFile is the table file a folder holds ("" when none): a
// measurement's (catch-rate, false-alarms, claims, mitigations,
// shrink-figures).
func MeasurementFile(dir string) string {
	for _, t := range tableFiles {
		if _, err := os.Stat(filepath.Join(dir, t.file)); err == nil {
			return t.file
		}
	}
	return ""
}

// Merge joins the folders of a measurement's shards (--shard I/N, one
// folder each) into out: the table of the whole plan, as the unsharded
// measurement writes it, and the histories the shards kept. The table's
// Markdown goes to w. out must not hold the table already.
func Merge(dirs []string, out string, w io.Writer) error {
	file := MeasurementFile(dirs[0])
	for _, t := range tableFiles {
		if t.file != file {
			continue
		}
		if _, err := os.Stat(filepath.Join(out, file)); err == nil {
			return fmt.Errorf("%s already holds %s: give --out a new folder", out, file)
		}
		if err := t.merge(dirs, file, out, w); err != nil {
			return err
		}
		return copyHistories(dirs, out)
	}
	return fmt.Errorf("%s holds no measurement's table (catch-rate.json, false-alarms.json, claims.json, mitigations.json or shrink-figures.json)", dirs[0])
}

// readParts reads each folder's file into a T.
func readParts[T any](dirs []string, file string) ([]*T, error) {
	var parts []*T
	for _, d := range dirs {
		var p T
		if err := reports.ReadJSON(filepath.Join(d, file), &p); err != nil {
			if errors.Is(err, os.ErrNotExist) {
				return nil, fmt.Errorf("%s has no %s: give the folders of one measurement's shards", d, file)
			}
			return nil, err
		}
		parts = append(parts, &p)
	}
	return parts, nil
}

// heading is what every measurement's file says of how it was measured,
// merged: the first shard's start, the longest shard's time, each
// shard's machine.
func heading(starts []time.Time, elapsed []reports.Millis, machines []string) (time.Time, reports.Millis, string) {
	first, longest := starts[0], elapsed[0]
	for i := range starts {
		if starts[i].Before(first) {
			first = starts[i]
		}
		longest = max(longest, elapsed[i])
	}
	parts := make([]string, len(machines))
	for i, m := range machines {
		parts[i] = fmt.Sprintf("shard %d took %s: %s", i+1, elapsed[i], m)
	}
	return first, longest, fmt.Sprintf("%d shards; %s", len(machines), strings.Join(parts, "; "))
}

// copyHistories copies the histories each shard kept into out.
func copyHistories(dirs []string, out string) error {
	for _, d := range dirs {
		src := filepath.Join(d, "histories")
		err := filepath.WalkDir(src, func(path string, e fs.DirEntry, err error) error {
			if err != nil || e.IsDir() {
				return err
			}
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			dst := filepath.Join(out, "histories", e.Name())
			if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
				return err
			}
			return os.WriteFile(dst, b, 0o644)
		})
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("copy the histories of %s: %w", d, err)
		}
	}
	return nil
}

// same checks a field every shard's file must agree on.
func same[T comparable](what string, values []T) error {
	for i, v := range values {
		if v != values[0] {
			return fmt.Errorf("part %d's %s is %v, part 1's %v: give the shards of one measurement", i+1, what, v, values[0])
		}
	}
	return nil
}

// collect maps each part to one value.
func collect[P, V any](parts []*P, f func(*P) V) []V {
	out := make([]V, len(parts))
	for i, p := range parts {
		out[i] = f(p)
	}
	return out
}

func mergeCatchRate(dirs []string, file, out string, w io.Writer) error {
	parts, err := readParts[reports.CatchRate](dirs, file)
	if err != nil {
		return err
	}
	if err := errors.Join(same("server", collect(parts, func(p *reports.CatchRate) string { return p.Server })),
		same("runs", collect(parts, func(p *reports.CatchRate) int { return p.Runs })),
		same("gate", collect(parts, func(p *reports.CatchRate) string { return p.Gate }))); err != nil {
		return err
	}
	rows, complete, err := measure.Merge(collect(parts, func(p *reports.CatchRate) measure.Part { return p.Part }),
		collect(parts, func(p *reports.CatchRate) bool { return p.Complete }),
		collect(parts, func(p *reports.CatchRate) []reports.CatchRow { return p.Rows }),
		func(r reports.CatchRow) string { return r.Mutant })
	if err != nil {
		return err
	}
	cr := *parts[0]
	cr.Rows, cr.Complete, cr.Part = rows, complete, measure.Part{}
	cr.Started, cr.Elapsed, cr.Machine = heading(collect(parts, func(p *reports.CatchRate) time.Time { return p.Started }),
		collect(parts, func(p *reports.CatchRate) reports.Millis { return p.Elapsed }), collect(parts, func(p *reports.CatchRate) string { return p.Machine }))
	reports.CatchRateMarkdown(w, &cr)
	return reports.WriteCatchRate(out, &cr)
}

func mergeFalseAlarms(dirs []string, file, out string, w io.Writer) error {
	parts, err := readParts[reports.FalseAlarms](dirs, file)
	if err != nil {
		return err
	}
	if err := errors.Join(same("runs", collect(parts, func(p *reports.FalseAlarms) int { return p.Runs })),
		same("duration", collect(parts, func(p *reports.FalseAlarms) reports.Millis { return p.Duration }))); err != nil {
		return err
	}
	rows, complete, err := measure.Merge(collect(parts, func(p *reports.FalseAlarms) measure.Part { return p.Part }),
		collect(parts, func(p *reports.FalseAlarms) bool { return p.Complete }),
		collect(parts, func(p *reports.FalseAlarms) []reports.AlarmRow { return p.Rows }),
		func(r reports.AlarmRow) string { return fmt.Sprintf("%s on %s %s", r.Client, r.Server, r.Topology) })
	if err != nil {
		return err
	}
	reports.SortAlarmRows(rows)
	fa := *parts[0]
	fa.Rows, fa.Complete, fa.Part = rows, complete, measure.Part{}
	fa.Started, fa.Elapsed, fa.Machine = heading(collect(parts, func(p *reports.FalseAlarms) time.Time { return p.Started }),
		collect(parts, func(p *reports.FalseAlarms) reports.Millis { return p.Elapsed }), collect(parts, func(p *reports.FalseAlarms) string { return p.Machine }))
	reports.FalseAlarmsMarkdown(w, &fa)
	return reports.WriteFalseAlarms(out, &fa)
}

func mergeClaims(dirs []string, file, out string, w io.Writer) error {
	parts, err := readParts[reports.Claims](dirs, file)
	if err != nil {
		return err
	}
	if err := errors.Join(same("server", collect(parts, func(p *reports.Claims) string { return p.Server })),
		same("runs", collect(parts, func(p *reports.Claims) int { return p.Runs }))); err != nil {
		return err
	}
	runs, complete, err := measure.Merge(collect(parts, func(p *reports.Claims) measure.Part { return p.Part }),
		collect(parts, func(p *reports.Claims) bool { return p.Complete }),
		collect(parts, claimRuns), func(r reports.ClaimRun) string { return runKey(r.Claim, r.Client, r.Seed) })
	if err != nil {
		return err
	}
	c := *parts[0]
	c.Version, c.Rows, c.Mutants = tallyClaims(c.Rows, c.Mutants, runs)
	c.Complete, c.Part = complete, measure.Part{}
	c.Started, c.Elapsed, c.Machine = heading(collect(parts, func(p *reports.Claims) time.Time { return p.Started }),
		collect(parts, func(p *reports.Claims) reports.Millis { return p.Elapsed }), collect(parts, func(p *reports.Claims) string { return p.Machine }))
	reports.ClaimsPage(w, &c)
	return reports.WriteClaims(out, &c)
}

func mergeShrinkFigures(dirs []string, file, out string, w io.Writer) error {
	parts, err := readParts[reports.ShrinkFigures](dirs, file)
	if err != nil {
		return err
	}
	if err := errors.Join(same("budget", collect(parts, func(p *reports.ShrinkFigures) string { return p.Budget })),
		same("tries", collect(parts, func(p *reports.ShrinkFigures) int { return p.Tries })),
		same("confirm", collect(parts, func(p *reports.ShrinkFigures) int { return p.Confirm }))); err != nil {
		return err
	}
	rows, complete, err := measure.Merge(collect(parts, func(p *reports.ShrinkFigures) measure.Part { return p.Part }),
		collect(parts, func(p *reports.ShrinkFigures) bool { return p.Complete }),
		collect(parts, func(p *reports.ShrinkFigures) []reports.Shrunk { return p.Rows }),
		func(r reports.Shrunk) string { return r.From })
	if err != nil {
		return err
	}
	sf := *parts[0]
	sf.Rows, sf.Complete, sf.Part = rows, complete, measure.Part{}
	sf.Started, sf.Elapsed, sf.Machine = heading(collect(parts, func(p *reports.ShrinkFigures) time.Time { return p.Started }),
		collect(parts, func(p *reports.ShrinkFigures) reports.Millis { return p.Elapsed }), collect(parts, func(p *reports.ShrinkFigures) string { return p.Machine }))
	reports.ShrinkFiguresMarkdown(w, &sf)
	return reports.WriteShrinkFigures(out, &sf)
}

// claimRuns are the runs a claims file holds, in its rows' details.
func claimRuns(c *reports.Claims) []reports.ClaimRun {
	var out []reports.ClaimRun
	for _, r := range append(c.Rows, c.Mutants...) {
		out = append(out, r.Details...)
	}
	return out
}
