package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/lockcheck/lockcheck/checker"
	"github.com/lockcheck/lockcheck/scenarios/lockclient"
	"github.com/lockcheck/lockcheck/topology"
)

// newFlags makes a flag set whose errors are one line and exit code 2.
func newFlags(name string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("lockcheck "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	return fs
}

// parse parses flags and reports whether the command should go on; code is
// the exit code when it should not.
func parse(fs *flag.FlagSet, args []string, stderr io.Writer) (ok bool, code int) {
	if sink, isSink := stderr.(*flagSink); isSink {
		sink.fs = fs
		if !sink.settle {
			return false, 0
		}
	}
	fs.SetOutput(io.Discard)
	err := fs.Parse(args)
	fs.SetOutput(stderr)
	if errors.Is(err, flag.ErrHelp) {
		fs.Usage()
		return false, 0
	}
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v: run %s -h for the flags\n", fs.Name(), err, fs.Name())
		return false, usageExit
	}
	return true, 0
}

// settled marks the point where a command's flags have become the
// settings it acts on, before it acts (starts a topology, connects to the
// engine, reads or writes a folder); handedOn is what it hands on, such as
// the resolved Scenario. Every command with flags calls it there and
// returns when it says false. A command applies a default only through
// its flag set, so that -h and docs/reference/cli.md print what it does:
// its tests stop it here (a flagSink that settles) and check that every
// flag not given still holds the default -h prints, and that a scenario
// handed on carries it.
func settled(stderr io.Writer, handedOn ...any) bool {
	sink, isSink := stderr.(*flagSink)
	if !isSink || !sink.settle || sink.fs == nil {
		return true
	}
	sink.values = map[string]string{}
	sink.fs.VisitAll(func(f *flag.Flag) { sink.values[f.Name] = f.Value.String() })
	sink.handedOn = handedOn
	return false
}

// optional is a flag whose default is not one value: it depends on what
// is known only after parsing (a run folder's own setting, another flag).
// -h prints no default for it, its usage says what applies, and the
// command asks whether it was given instead of overriding a printed
// default the user would then be misled by.
type optional[T any] struct {
	value T
	given bool
	parse func(string) (T, error)
}

func (o *optional[T]) String() string {
	if o == nil || !o.given {
		return ""
	}
	return fmt.Sprint(o.value)
}

func (o *optional[T]) Set(s string) error {
	v, err := o.parse(s)
	if err != nil {
		return err
	}
	o.value, o.given = v, true
	return nil
}

// derivedDefault marks a flag whose usage must say what applies when it is
// not given: the tests hold it to that.
func (o *optional[T]) derivedDefault() {}

// or is the flag's value when it was given, else def.
func (o *optional[T]) or(def T) T {
	if o.given {
		return o.value
	}
	return def
}

// Given says whether the flag was given on the command line.
func (o *optional[T]) Given() bool { return o.given }

// optionalInt registers an int flag without a default (see optional).
func optionalInt(fs *flag.FlagSet, name, usage string) *optional[int] {
	o := &optional[int]{parse: func(s string) (int, error) {
		n, err := strconv.Atoi(s)
		if err != nil {
			return 0, errors.New("want a whole number")
		}
		return n, nil
	}}
	fs.Var(o, name, usage)
	return o
}

// optionalDuration registers a duration flag without a default (see
// optional).
func optionalDuration(fs *flag.FlagSet, name, usage string) *optional[time.Duration] {
	o := &optional[time.Duration]{parse: func(s string) (time.Duration, error) {
		d, err := time.ParseDuration(s)
		if err != nil {
			return 0, errors.New("want a duration such as 10ms")
		}
		return d, nil
	}}
	fs.Var(o, name, usage)
	return o
}

// fail prints one line and returns the bad-input exit code.
func fail(stderr io.Writer, format string, args ...any) int {
	fmt.Fprintf(stderr, "lockcheck: "+format+"\n", args...)
	return usageExit
}

// sourceFlags are the flags that choose where images come from.
type sourceFlags struct {
	binaries, tags multiFlag
	registry       string
}

// RegistryEnv names the registry official images come from when
// --registry is not given.
const RegistryEnv = "LOCKCHECK_REGISTRY"

func (s *sourceFlags) register(fs *flag.FlagSet) {
	// The environment is read in sources, not here: a flag's default is
	// the same on every machine, as the CLI reference shows it.
	fs.StringVar(&s.registry, "registry", "", "HOST:PORT: pull official images (valkey/valkey:9.1.3...) from this registry, before images built here (default $"+RegistryEnv+")")
	fs.Var(&s.binaries, "server-binary", "NAME=PATH: run a valkey-server built elsewhere as build NAME (repeatable)")
	fs.Var(&s.tags, "image", "NAME=TAG: use a local image for build NAME (repeatable)")
}

// sources checks the flags and returns them as topology.Sources.
func (s *sourceFlags) sources() (topology.Sources, error) {
	registry := s.registry
	if registry == "" {
		registry = os.Getenv(RegistryEnv)
	}
	src := topology.Sources{Tags: map[string]string{}, Binaries: map[string]string{}, Registry: registry}
	if r := registry; r != "" && (strings.Contains(r, "/") || !strings.Contains(r, ":")) {
		return src, fmt.Errorf("--registry %q: want HOST:PORT, e.g. 127.0.0.1:5000", r)
	}
	for _, kv := range s.binaries {
		name, path, ok := strings.Cut(kv, "=")
		if !ok || name == "" || path == "" {
			return src, fmt.Errorf("--server-binary %q: want NAME=PATH, e.g. valkey-patched=./src/valkey-server", kv)
		}
		src.Binaries[name] = path
	}
	for _, kv := range s.tags {
		name, tag, ok := strings.Cut(kv, "=")
		if !ok || name == "" || tag == "" {
			return src, fmt.Errorf("--image %q: want NAME=TAG, e.g. valkey-9.0=valkey/valkey:9.0.7", kv)
		}
		if _, err := topology.Lookup(name); err != nil {
			return src, err
		}
		src.Tags[name] = tag
	}
	return src, nil
}

// build finds a build by name, including a user's own binary's name.
func (s *sourceFlags) build(name string) (topology.Build, error) {
	bins := map[string]string{}
	for _, kv := range s.binaries {
		n, path, _ := strings.Cut(kv, "=")
		bins[n] = path
	}
	return topology.Sources{Binaries: bins}.Lookup(name)
}

// builds finds each named build; no names give none.
func (s *sourceFlags) builds(names []string) ([]topology.Build, error) {
	var out []topology.Build
	for _, name := range names {
		b, err := s.build(name)
		if err != nil {
			return nil, err
		}
		out = append(out, b)
	}
	return out, nil
}

type multiFlag []string

func (m *multiFlag) String() string     { return strings.Join(*m, ",") }
func (m *multiFlag) Set(v string) error { *m = append(*m, v); return nil }

// checkClient refuses a client kind that is neither built in nor external.
func checkClient(client string, stderr io.Writer) int {
	if strings.HasPrefix(client, lockclient.ExternalPrefix) {
		if err := lockclient.ValidateKind(client); err != nil {
			return fail(stderr, "%v", err)
		}
		return 0
	}
	if !lockclient.Known(client) {
		return fail(stderr, "unknown client %q: choose one of %s, or external:CMD", client, strings.Join(lockclient.Kinds(), ", "))
	}
	return 0
}

// parseExpect reads --expect; empty is none.
func parseExpect(s string, stderr io.Writer) (checker.Expectation, int) {
	if s == "" {
		return "", 0
	}
	e, err := checker.ParseExpectation(s)
	if err != nil {
		return "", fail(stderr, "--expect: %v", err)
	}
	return e, 0
}
