package compat

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/valkey-io/valkey-go"

	"github.com/lockcheck/lockcheck/topology"
)

// Outcome is one cell's verdict.
type Outcome string

const (
	// Pass: the observed reply is what the build is expected to do.
	Pass Outcome = "pass"
	// Fail: the reply contradicts the expectation.
	Fail Outcome = "fail"
	// Unsupported: the build lacks the command and says so the expected way.
	Unsupported Outcome = "unsupported"
	// Unavailable: the build's image could not be had here.
	Unavailable Outcome = "unavailable"
)

// Cell is one observation: a case on a build in a topology. Case is the
// case's name; the JSON keeps the matrix's name for it, "check".
type Cell struct {
	Server   string  `json:"server"`
	Version  string  `json:"version"`
	Topology string  `json:"topology"`
	Case     string  `json:"check"`
	Outcome  Outcome `json:"outcome"`
	Observed string  `json:"observed"`
	Expected string  `json:"expected,omitempty"`
}

// Case is one compatibility check: a named observation of some commands on
// a running server, judged against the build's expected features. Kinds
// limits it to some topologies. (A verdict over a history is checker's.)
type Case struct {
	Name  string
	Kinds []topology.Kind
	run   func(ctx context.Context, e *env) verdict
}

// Applies reports whether the case runs on a topology kind.
func (c Case) Applies(k topology.Kind) bool { return len(c.Kinds) == 0 || slices.Contains(c.Kinds, k) }

type verdict struct {
	outcome            Outcome
	observed, expected string
}

// env is what a case runs against: the topology, a client that follows
// it, and the build's expected features.
type env struct {
	t      *topology.Topology
	c      valkey.Client
	f      Features
	prefix string
}

// key names a case's own lock key; the hash tag keeps it and its fence
// counter in one cluster slot.
func (e *env) key(name string) string { return fmt.Sprintf("lock:{%s%s}", e.prefix, name) }

// fenceKey is the fence counter sharing name's hash tag.
func (e *env) fenceKey(name string) string { return fmt.Sprintf("fence:{%s%s}", e.prefix, name) }

// do runs a key command (args[1] is the key) through the topology client,
// which routes it to the key's slot, and returns its reply as text, an
// error reply as its message.
func (e *env) do(ctx context.Context, args ...string) string {
	return replyOrError(e.c.Do(ctx, e.c.B().Arbitrary(args[0]).Keys(args[1]).Args(args[2:]...).Build()))
}

func replyOrError(res valkey.ValkeyResult) string {
	s, err := topology.ReplyText(res)
	if err != nil {
		return err.Error()
	}
	return s
}

// expect judges an observation: with the feature, the reply must satisfy
// ok; without it, the reply must be the build's way of refusing (an
// unknown command or a syntax error), which makes the cell unsupported.
func expect(has bool, observed, want string, ok func(string) bool) verdict {
	if has {
		if ok(observed) {
			return verdict{Pass, observed, want}
		}
		return verdict{Fail, observed, want}
	}
	if isRefusal(observed) {
		return verdict{Unsupported, observed, "refused: unknown command or syntax error"}
	}
	return verdict{Fail, observed, "refused: unknown command or syntax error"}
}

// always judges an observation every build must satisfy.
func always(observed, want string, ok func(string) bool) verdict {
	return expect(true, observed, want, ok)
}

func equals(want string) func(string) bool { return func(s string) bool { return s == want } }

func contains(want string) func(string) bool {
	return func(s string) bool { return strings.Contains(s, want) }
}

func isRefusal(s string) bool {
	s = strings.ToLower(s)
	return strings.Contains(s, "unknown command") || strings.Contains(s, "syntax error") || strings.Contains(s, "unknown subcommand")
}
