package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/lockcheck/lockcheck/compat"
	"github.com/lockcheck/lockcheck/reports"
	"github.com/lockcheck/lockcheck/topology"
)

func runCompat(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlags("compat", stderr)
	servers := fs.String("servers", "", "comma-separated builds (default: every build; unavailable ones become columns marked unavailable)")
	topos := fs.String("topologies", "standalone,replicated,sentinel,cluster", "comma-separated topologies")
	out := fs.String("out", "out/compat", "folder for matrix.json, matrix.md and matrix.html")
	var sf sourceFlags
	sf.register(fs)
	if ok, code := parse(fs, args, stderr); !ok {
		return code
	}
	src, err := sf.sources()
	if err != nil {
		return fail(stderr, "%v", err)
	}
	builds, err := sf.builds(splitList(*servers))
	if err != nil {
		return fail(stderr, "%v", err)
	}
	if len(builds) == 0 {
		builds = topology.Builds()
	}
	var kinds []topology.Kind
	for _, name := range splitList(*topos) {
		k, err := topology.ParseKind(name)
		if err != nil {
			return fail(stderr, "%v", err)
		}
		kinds = append(kinds, k)
	}
	if len(builds) == 0 || len(kinds) == 0 {
		return fail(stderr, "nothing to observe: name at least one build and one topology")
	}
	if !settled(stderr, builds, kinds, src) {
		return 0
	}
	eng, err := topology.Connect(ctx, nil)
	if err != nil {
		return fail(stderr, "%v", err)
	}
	defer eng.Close()
	m, err := compat.RunMatrix(ctx, eng, builds, src, kinds, stderr)
	if werr := reports.WriteMatrix(*out, m); werr != nil {
		return fail(stderr, "%v", werr)
	}
	fmt.Fprintf(stdout, "pass %d, fail %d, unsupported %d, unavailable %d: %s/matrix.html\n",
		m.Count(compat.Pass), m.Count(compat.Fail), m.Count(compat.Unsupported), m.Count(compat.Unavailable), *out)
	if err != nil {
		return fail(stderr, "compat stopped: %v (the matrix holds what was observed)", err)
	}
	if m.Errors() > 0 {
		return fail(stderr, "%d topologies did not start: see %s/matrix.md", m.Errors(), *out)
	}
	if m.Count(compat.Fail) > 0 {
		return 1
	}
	return 0
}

func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}
