package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/lockcheck/lockcheck/harness"
	"github.com/lockcheck/lockcheck/history"
	"github.com/lockcheck/lockcheck/history/historyjson"
	"github.com/lockcheck/lockcheck/history/jepsen"
)

// runImport converts another tool's history into a run folder that
// lockcheck check reads: a separate step, so the converted history.json can
// be kept, diffed and checked again with any of check's flags.
func runImport(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlags("import", stderr)
	ttl := fs.Duration("ttl", 0, "the lease every acquire is taken to ask for (required: Jepsen records none); for a lock without leases give one longer than the test, e.g. 24h")
	key := fs.String("key", "lock", "lock name of operations whose :value names none")
	force := fs.Bool("force", false, "when OUT holds a run already: replace it, removing its files the new history makes stale (result.json, the reports, scenario.json)")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: lockcheck import jepsen --ttl D [--key K] FILE OUT\n\nReads FILE, a Jepsen history.edn of a lock workload (:acquire/:release or :lock/:unlock; :info is an unknown outcome; the nemesis's :start-X/:stop-X are fault windows), and writes OUT/history.json; lockcheck check OUT then checks it.")
		fs.PrintDefaults()
	}
	if ok, code := parse(fs, args, stderr); !ok {
		return code
	}
	if fs.NArg() > 0 && fs.Arg(0) == "jepsen" { // flags may follow the format
		if ok, code := parse(fs, fs.Args()[1:], stderr); !ok {
			return code
		}
	} else if fs.NArg() > 0 {
		return fail(stderr, "import: unknown format %q: want jepsen (lockcheck import jepsen --ttl D FILE OUT)", fs.Arg(0))
	}
	if fs.NArg() != 2 {
		return fail(stderr, "import wants a format, a file and a folder: lockcheck import jepsen --ttl D FILE OUT")
	}
	if *ttl == 0 {
		return fail(stderr, "import: --ttl is required: %v (e.g. --ttl 10s, or --ttl 24h for no lease)", jepsen.ErrNoTTL)
	}
	if *ttl <= 0 {
		return fail(stderr, "import: --ttl %s: want a lease above 0, e.g. --ttl 10s, or --ttl 24h for a lock without leases", *ttl)
	}
	file, out := fs.Arg(0), fs.Arg(1)
	if !settled(stderr) {
		return 0
	}
	f, _, err := historyjson.OpenInput(file)
	if err != nil {
		return fail(stderr, "import: %v", err)
	}
	defer f.Close()
	if err := harness.CheckOut(out, *force); err != nil {
		return fail(stderr, "import: %v", err)
	}
	h, err := importJepsen(f, *ttl, *key)
	if err != nil {
		return fail(stderr, "%v", err)
	}
	// the stale files go once the new history is known good
	if err := harness.ClaimOut(out, *force); err != nil {
		return fail(stderr, "import: %v", err)
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return fail(stderr, "import: %v", err)
	}
	path := filepath.Join(out, "history.json")
	if err := h.Save(path); err != nil {
		return fail(stderr, "import: %v", err)
	}
	fmt.Fprintf(stdout, "wrote %s: %d operations, %d fault windows; check it with lockcheck check %s\n", path, len(h.Ops), len(h.Faults), out)
	return 0
}

// importJepsen reads f; a bad line's error names the file, line and
// column and says how to fix it.
func importJepsen(f *os.File, ttl time.Duration, key string) (*history.History, error) {
	file := f.Name()
	h, err := jepsen.Import(f, jepsen.Options{TTL: ttl, Key: key})
	var bad *jepsen.EDNError
	if errors.As(err, &bad) {
		return nil, fmt.Errorf("%s:%d:%d: %s", file, bad.Line, bad.Col, bad.Msg)
	}
	if err != nil {
		return nil, fmt.Errorf("import %s: %w", file, err)
	}
	return h, nil
}
