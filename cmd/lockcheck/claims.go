package main

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"

	"github.com/lockcheck/lockcheck/harness"
	"github.com/lockcheck/lockcheck/reports"
	"github.com/lockcheck/lockcheck/scenarios"
	"github.com/lockcheck/lockcheck/topology"
)

// runClaims measures the claims table: each of the article's claims about
// Redlock in the scenario that tests it, by the built-in Redlock client
// and redsync, and each Redlock mutant under the default gate. A
// measurement for the README, not a test: it exits 0 when every run was
// made, whatever the figures.
func runClaims(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlags("claims", stderr)
	var src sourceFlags
	src.register(fs)
	runs := fs.Int("runs", 20, "seeded runs per claim and client (seeds 1..runs)")
	parallel := fs.Int("parallel", 3, "runs at once, each on a topology of its own")
	server := fs.String("server", "valkey-9.1", "server build of every node")
	table := fs.String("table", reports.TableClaims, "claims: Redlock's claims on independent primaries and its mutants; mitigations: the failover race under each mitigation on Sentinel and cluster")
	only := fs.String("only", "", "comma-separated claim or mutant names to run (default: every one)")
	out := fs.String("out", "", "folder for TABLE.md, TABLE.json and the histories of the runs worth a look (default out/TABLE)")
	if ok, code := parse(fs, args, stderr); !ok {
		return code
	}
	if fs.NArg() > 0 {
		return fail(stderr, "unexpected argument %q: run lockcheck claims -h for the flags", fs.Arg(0))
	}
	if *runs <= 0 || *parallel <= 0 {
		return fail(stderr, "--runs %d, --parallel %d: want positive values", *runs, *parallel)
	}
	claims, mutants := scenarios.RedlockClaims(), scenarios.RedlockMutants
	switch *table {
	case reports.TableClaims:
	case reports.TableMitigations:
		claims, mutants = scenarios.MitigationClaims(), nil
	default:
		return fail(stderr, "--table %q: choose %s or %s", *table, reports.TableClaims, reports.TableMitigations)
	}
	if *out == "" {
		*out = filepath.Join("out", *table)
	}
	if *only != "" {
		var names []string
		for _, c := range claims {
			names = append(names, c.Name)
		}
		names = append(names, mutants...)
		want := strings.Split(*only, ",")
		for _, w := range want {
			if !slices.Contains(names, w) {
				return fail(stderr, "--only %q: choose among %s", w, strings.Join(names, ", "))
			}
		}
		claims = slices.DeleteFunc(claims, func(c scenarios.Claim) bool { return !slices.Contains(want, c.Name) })
		mutants = slices.DeleteFunc(slices.Clone(mutants), func(m string) bool { return !slices.Contains(want, m) })
	}
	sources, err := src.sources()
	if err != nil {
		return fail(stderr, "%v", err)
	}
	b, err := src.build(*server)
	if err != nil {
		return fail(stderr, "%v", err)
	}
	eng, err := topology.Connect(ctx, nil)
	if err != nil {
		return fail(stderr, "%v", err)
	}
	defer eng.Close()
	fmt.Fprintf(stderr, "claims: %s table, %d row(s), %d mutant(s), %d seeds each on %s -> %s\n", *table, len(claims), len(mutants), *runs, b.Name, *out)
	m := harness.Claims{Table: *table, Build: b, Sources: sources, Claims: claims, Mutants: mutants, Runs: *runs, Parallel: *parallel, Out: *out, Log: stderr}
	c, err := m.Measure(ctx, eng)
	if c != nil {
		if c.Table == reports.TableMitigations {
			reports.MitigationsMarkdown(stdout, c)
		} else {
			reports.ClaimsMarkdown(stdout, c)
		}
		fmt.Fprintf(stderr, "claims: %s written after %s\n", filepath.Join(*out, *table+".md"), c.Elapsed)
	}
	if err != nil {
		return fail(stderr, "%v", err)
	}
	if !c.Complete {
		return fail(stderr, "claims interrupted: the figures in %s are partial", *out)
	}
	return 0
}
