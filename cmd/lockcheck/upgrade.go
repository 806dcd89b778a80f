package main

import (
	"context"
	"fmt"
	"io"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/lockcheck/lockcheck/harness"
	"github.com/lockcheck/lockcheck/reports"
)

// runUpgrade is lockcheck upgrade: lockcheck run with a rolling upgrade
// from one build to another as its one fault (Scenario.UpgradeTo), then
// the step table.
func runUpgrade(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlags("upgrade", stderr)
	var sf scenarioFlags
	sf.registerUpgrade(fs)
	out := fs.String("out", "", "folder for the run's files (default runs/<time>-<from>-<topology>-<client>-<seed>)")
	force := fs.Bool("force", false, "when --out holds a run already: replace that run's files (its result and reports would be stale)")
	expect := fs.String("expect", "", "exit 0 or 1 by this expectation alone: lock-correct (the default), safe or fence-holds")
	if ok, code := parse(fs, args, stderr); !ok {
		return code
	}
	e, code := parseExpect(*expect, stderr)
	if code != 0 {
		return code
	}
	switch {
	case fs.NArg() > 0:
		return fail(stderr, "unexpected argument %q: run lockcheck upgrade -h for the flags", fs.Arg(0))
	case sf.s.Server == "" || sf.s.UpgradeTo == "":
		return fail(stderr, "name both builds: lockcheck upgrade --from valkey-8.1 --to valkey-9.1 (lockcheck images lists them)")
	}
	s, err := sf.scenario()
	if err != nil {
		return fail(stderr, "%v", err)
	}
	src, err := sf.sources()
	if err != nil {
		return fail(stderr, "%v", err)
	}
	dir := *out
	if dir == "" {
		dir = s.Folder(time.Now())
	}
	if !settled(stderr, s) {
		return 0
	}
	if err := harness.ClaimOut(dir, *force); err != nil {
		return fail(stderr, "%v", err)
	}
	code = execute(ctx, s, src, dir, gate{expect: e}, stdout, stderr)
	if r, err := reports.LoadRunResult(filepath.Join(dir, "result.json")); err == nil {
		writeSteps(stdout, r.Steps)
	}
	return code
}

// writeSteps prints the step table: per step, the servers that can lead
// and lack the client's commands, the replicas whose link is down, and
// what the checks found in it.
func writeSteps(w io.Writer, steps []reports.Step) {
	for _, st := range steps {
		var parts []string
		if len(st.Lacking) > 0 {
			parts = append(parts, strings.Join(st.Lacking, "; "))
		}
		if len(st.Links) > 0 {
			parts = append(parts, "link down: "+strings.Join(st.Links, ", "))
		}
		if len(st.Behind) > 0 {
			parts = append(parts, "replica behind its primary: "+strings.Join(st.Behind, "; "))
		}
		var found []string
		for _, k := range sortedKeys(st.Found) {
			found = append(found, fmt.Sprintf("%s %d", k, st.Found[k]))
		}
		if len(found) > 0 {
			parts = append(parts, "found: "+strings.Join(found, ", "))
		}
		if len(parts) == 0 {
			parts = append(parts, "ok")
		}
		fmt.Fprintf(w, "  %s: %s\n", st.Detail, strings.Join(parts, "; "))
	}
}

func sortedKeys(m map[string]int) []string { return slices.Sorted(maps.Keys(m)) }
