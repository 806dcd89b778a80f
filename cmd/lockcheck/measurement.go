package main

import (
	"flag"
	"fmt"
	"io"
	"path/filepath"

	"github.com/lockcheck/lockcheck/measure"
	"github.com/lockcheck/lockcheck/measure/tables"
	"github.com/lockcheck/lockcheck/reports"
)

// measurementFlags are the flags every measurement command takes (catch-
// rate, false-alarms, claims, shrink-figures): the seeds (but for
// shrink-figures, whose items are runs already made), the runs at once,
// the shard of the plan and where images come from.
type measurementFlags struct {
	src      sourceFlags
	runs     *int
	parallel *int
	shard    *string
	force    *bool
	resume   *bool
}

// register adds the flags, with the command's own words for what a seed
// and a lane are.
func (m *measurementFlags) register(fs *flag.FlagSet, runsUsage string, parallel int, parallelUsage string) {
	m.runs = fs.Int("runs", 20, runsUsage)
	m.registerLanes(fs, parallel, parallelUsage)
	m.force = fs.Bool("force", false, "when --out holds an earlier measurement's table: measure again over it")
	m.resume = fs.Bool("resume", false, "go on with the measurement --out holds, stopped before its end (Ctrl-C, a session's end, a run that would not end): what it measured is kept and only the rest made, with the flags it was started with")
}

// registerLanes adds the flags of a measurement without seeds: the lanes
// at once, the shard and where images come from.
func (m *measurementFlags) registerLanes(fs *flag.FlagSet, parallel int, parallelUsage string) {
	m.src.register(fs)
	m.parallel = fs.Int("parallel", parallel, parallelUsage)
	m.shard = fs.String("shard", "", "I/N: measure only the I-th of N parts of the plan, with the whole plan's seeds (lockcheck merge joins the parts' folders into the whole table)")
}

// fresh refuses, before anything starts, an --out that holds an earlier
// measurement's table: the user's record, replaced only with --force.
func (m *measurementFlags) fresh(dir string, stderr io.Writer) int {
	if m.force != nil && *m.force {
		return 0
	}
	if f := tables.MeasurementFile(dir); f != "" {
		return fail(stderr, "%s holds an earlier measurement (%s): give another --out, or --force to measure again over it%s", dir, f, resumeHint(f))
	}
	return 0
}

// resumeHint names --resume for the tables that can go on from where an
// earlier measurement stopped.
func resumeHint(file string) string {
	if tables.Resumable(file) {
		return ", or --resume to go on with it"
	}
	return ""
}

// goOn checks --out against --resume and --force before anything
// starts. Without --resume the folder must hold no earlier table
// (fresh). With it, the table file it holds is read into *earlier and
// check (the table's CheckEarlier, called once *earlier is set) says
// whether this measurement can go on from it.
func goOn[T any](m *measurementFlags, dir, file string, earlier **T, check func() error, stderr io.Writer) int {
	if !*m.resume {
		return m.fresh(dir, stderr)
	}
	if *m.force {
		return fail(stderr, "--resume and --force: choose one (go on with %s, or measure again over it)", dir)
	}
	e, err := tables.ReadEarlier[T](dir, file)
	if err != nil {
		return fail(stderr, "--resume: %v", err)
	}
	if e == nil {
		return fail(stderr, "--resume: %s holds no %s to go on with: give the --out of the measurement to resume", dir, file)
	}
	*earlier = e
	if err := check(); err != nil {
		return fail(stderr, "--resume: %v", err)
	}
	return 0
}

// check validates the flags before anything is started: bad input is one
// line and exit 2.
func (m *measurementFlags) check(stderr io.Writer) (measure.Shard, int) {
	if m.runs != nil && *m.runs <= 0 {
		return measure.Shard{}, fail(stderr, "--runs %d: want a positive number of seeds", *m.runs)
	}
	if *m.parallel <= 0 {
		return measure.Shard{}, fail(stderr, "--parallel %d: want at least 1 at once", *m.parallel)
	}
	sh, err := measure.ParseShard(*m.shard)
	if err != nil {
		return measure.Shard{}, fail(stderr, "%v", err)
	}
	return sh, 0
}

// measurement is a measurement command's table: its name, the folder
// and file it is written to, and the shard measured.
type measurement struct {
	name, dir, file string
	shard           measure.Shard
}

// end says where the table went (when written) and returns the
// command's exit code: 2 when the measurement failed or was interrupted
// (the figures are partial), else 0 whatever the figures.
func (m measurement) end(stderr io.Writer, written bool, elapsed reports.Millis, complete bool, err error) int {
	if written {
		fmt.Fprintf(stderr, "%s: %s written after %s\n", m.name, filepath.Join(m.dir, m.file), elapsed)
	}
	if err != nil {
		return fail(stderr, "%v", err)
	}
	if !complete {
		return fail(stderr, "%s interrupted: the figures in %s are partial", m.name, m.dir)
	}
	if !m.shard.Whole() {
		fmt.Fprintf(stderr, "%s: shard %s done; lockcheck merge --out DIR SHARD_DIR... joins it with the others\n", m.name, m.shard)
	}
	return 0
}

// shardNote is ", shard I/N" for a shard's start line, "" for the whole.
func shardNote(s measure.Shard) string {
	if s.Whole() {
		return ""
	}
	return ", shard " + s.String()
}
