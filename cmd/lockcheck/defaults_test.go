package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/lockcheck/lockcheck/scenarios"
)

// settleArgs are the operands and required flags each command needs to get
// past its checks to settled; a command missing here gets none.
var settleArgs = map[string][]string{
	"probe":          {"--server", "valkey-9.1"},
	"up":             {"--server", "valkey-9.1"},
	"run":            {"--server", "valkey-9.1"},
	"upgrade":        {"--from", "valkey-8.1", "--to", "valkey-9.1"},
	"replay":         {"DIR"},
	"shrink":         {"DIR"},
	"shrink-figures": {"DIR"},
	"check":          {"DIR"},
	"import":         {"jepsen", "--ttl", "10s", "FILE", "OUT"},
	"adapter-check":  {"CMD"},
	"merge":          {"SHARD_DIR"},
}

// TestFlagDefaultsAreApplied holds what -h and docs/reference/cli.md print
// to what each command does. Every command with flags is run with only the
// arguments it needs, through a sink that stops it at settled, where its
// flags have become the settings it acts on, before anything starts. Then
// every flag not given must still hold the default -h prints (a command
// that overwrites it, as upgrade once set --ttl 2s behind a printed 15s,
// fails here), and a Scenario handed on must carry the printed default of
// every flag bound to one of its fields, except a flag printed without a
// default whose usage says "(default ...)": that default depends on other
// settings and the usage says how.
func TestFlagDefaultsAreApplied(t *testing.T) {
	t.Setenv(RegistryEnv, "")
	bindings := scenarioBindings(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // nothing should start; if something does, it stops at once
	for _, c := range commands() {
		fs, _, err := commandFlags(c)
		if err != nil {
			t.Fatal(err)
		}
		if !hasFlags(fs) {
			continue
		}
		args := settleArgs[c.name]
		sink := &flagSink{settle: true}
		code := c.run(ctx, args, io.Discard, sink)
		line := strings.TrimSpace(strings.Join(append([]string{"lockcheck", c.name}, args...), " "))
		if sink.values == nil {
			t.Errorf("%s returned %d before it reached settled (%s): call settled where its flags have become its settings, or give it the arguments it needs in settleArgs", line, code, strings.TrimSpace(sink.String()))
			continue
		}
		given := map[string]bool{}
		sink.fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
		sink.fs.VisitAll(func(f *flag.Flag) {
			if given[f.Name] {
				return
			}
			if got := sink.values[f.Name]; got != f.DefValue {
				t.Errorf("%s: -h prints --%s's default as %q, but the command applies %q: declare the default it applies in the flag set", line, f.Name, f.DefValue, got)
			}
		})
		for _, h := range sink.handedOn {
			s, ok := h.(scenarios.Scenario)
			if !ok {
				continue
			}
			v := reflect.ValueOf(s)
			sink.fs.VisitAll(func(f *flag.Flag) {
				field, bound := bindings[f.Name+"\x00"+f.Usage]
				if !bound || given[f.Name] || derived(f) {
					return
				}
				if got := fmt.Sprint(v.FieldByName(field).Interface()); got != f.DefValue {
					t.Errorf("%s: -h prints --%s's default as %q, but the scenario it runs has %s %q: declare the default it applies in the flag set", line, f.Name, f.DefValue, field, got)
				}
			})
		}
	}
}

// derived says whether a flag's default depends on other settings: it is
// printed as none, and its usage says what applies.
func derived(f *flag.Flag) bool {
	switch f.DefValue {
	case "", "0", "0s", "false":
		return strings.Contains(f.Usage, "(default")
	}
	return false
}

// scenarioBindings maps each scenario flag (of run and of upgrade), by
// name and usage, to the Scenario field it is bound to, found by address:
// the flag's value points at the field. A command's own flag of the same
// name (false-alarms' --clients) is another flag.
func scenarioBindings(t *testing.T) map[string]string {
	out := map[string]string{}
	for _, register := range []func(*scenarioFlags, *flag.FlagSet){(*scenarioFlags).register, (*scenarioFlags).registerUpgrade} {
		var sf scenarioFlags
		fs := flag.NewFlagSet("bindings", flag.ContinueOnError)
		register(&sf, fs)
		sv := reflect.ValueOf(&sf.s).Elem()
		fs.VisitAll(func(f *flag.Flag) {
			p := reflect.ValueOf(f.Value)
			if p.Kind() != reflect.Pointer {
				return
			}
			// the settings, not the parts that hold them (a part's
			// address is its first setting's)
			for _, sf := range reflect.VisibleFields(sv.Type()) {
				if field := sv.FieldByIndex(sf.Index); !sf.Anonymous && field.Type().Size() > 0 && field.Addr().Pointer() == p.Pointer() {
					out[f.Name+"\x00"+f.Usage] = sf.Name
				}
			}
		})
	}
	found := map[string]string{}
	for key, field := range out {
		name, _, _ := strings.Cut(key, "\x00")
		found[name] = field
	}
	for name, field := range map[string]string{"ttl": "TTL", "duration": "Duration", "topology": "Topology", "from": "Server", "to": "UpgradeTo"} {
		if found[name] != field {
			t.Fatalf("--%s is bound to Scenario field %q, want %s: the bindings are not found", name, found[name], field)
		}
	}
	return out
}

func hasFlags(fs *flag.FlagSet) bool {
	n := 0
	fs.VisitAll(func(*flag.Flag) { n++ })
	return n > 0
}

// TestNoFlagOverriddenWhenNotGiven reads the commands' sources: none asks
// the flag package which flags were given (FlagSet.Visit). Asking is how a
// command replaces a printed default after parsing (if --ttl was not
// given, use 2s), a drift the runtime test sees only where the command
// writes the flag's own variable. A default that depends on other
// settings is an optional flag (optionalInt, optionalDuration) whose usage
// says what applies.
func TestNoFlagOverriddenWhenNotGiven(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			if sel, ok := call.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "Visit" {
				t.Errorf("%s: a command asks which flags were given: declare the default it applies in the flag set, or make the flag optional with its usage saying what applies", fset.Position(call.Pos()))
			}
			return true
		})
	}
}

// TestOptionalFlagsSayTheirDefault: a flag printed without a default
// because its default depends on other settings says in its usage what
// applies.
func TestOptionalFlagsSayTheirDefault(t *testing.T) {
	for _, c := range commands() {
		fs, _, err := commandFlags(c)
		if err != nil {
			t.Fatal(err)
		}
		fs.VisitAll(func(f *flag.Flag) {
			if _, ok := f.Value.(interface{ derivedDefault() }); ok && !strings.Contains(f.Usage, "(default") {
				t.Errorf("lockcheck %s --%s has no printed default and its usage does not say what applies: add (default ...)", c.name, f.Name)
			}
		})
	}
}

// TestHelpOnce: lockcheck COMMAND -h prints the command's usage once,
// every flag once, and exits 0.
func TestHelpOnce(t *testing.T) {
	for _, c := range commands() {
		var stdout, stderr bytes.Buffer
		if code := run([]string{c.name, "-h"}, &stdout, &stderr); code != 0 {
			t.Errorf("lockcheck %s -h: exit %d, want 0", c.name, code)
		}
		help := stderr.String()
		if n := strings.Count(help, "usage:") + strings.Count(help, "Usage of"); n != 1 {
			t.Errorf("lockcheck %s -h prints its usage %d times, want once:\n%s", c.name, n, help)
		}
		fs, _, err := commandFlags(c)
		if err != nil {
			t.Fatal(err)
		}
		fs.VisitAll(func(f *flag.Flag) {
			if n := strings.Count(help, "\n  -"+f.Name+" ") + strings.Count(help, "\n  -"+f.Name+"\n"); n != 1 {
				t.Errorf("lockcheck %s -h lists --%s %d times, want once", c.name, f.Name, n)
			}
		})
	}
}
