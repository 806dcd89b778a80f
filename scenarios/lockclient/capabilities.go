package lockclient

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/valkey-io/valkey-go"
)

// Capability is a server feature a client kind needs.
type Capability string

const (
	CapIFEQ    Capability = "SET IFEQ"
	CapDELIFEQ Capability = "DELIFEQ"
	CapDELEX   Capability = "DELEX"
	CapLua     Capability = "Lua scripting"
)

// since says where a capability appeared, for the refusal line.
var since = map[Capability]string{
	CapIFEQ:    "Valkey 8.1+, Redis 8.4+",
	CapDELIFEQ: "Valkey 9.0+",
	CapDELEX:   "Valkey 9.2+, Redis 8.4+",
	CapLua:     "EVAL; absent from builds without the Lua engine",
}

// Since says which builds have the capability, as the refusal line and
// the reference pages name them.
func (c Capability) Since() string { return since[c] }

// Capabilities is what one server answered to the probe.
type Capabilities map[Capability]bool

// ErrUnsupported marks a refusal: the build lacks a command the client
// needs. The run reports it in one line and does not start.
var ErrUnsupported = errors.New("unsupported")

// Probe asks the server what it has: COMMAND INFO DELIFEQ DELEX (nil for an
// unknown command), SET IFEQ on a scratch key (a syntax error before 8.1;
// nil otherwise, and the missing key is not created), and EVAL of a trivial
// script. In a cluster the probe reaches one node.
func Probe(ctx context.Context, opt valkey.ClientOption) (Capabilities, error) {
	opt.DisableRetry = true
	c, err := valkey.NewClient(opt)
	if err != nil {
		return nil, fmt.Errorf("probe: connect: %w", err)
	}
	defer c.Close()
	caps, err := commandInfo(ctx, c)
	if err != nil {
		return nil, err
	}
	scratch := "lockcheck:probe:{" + newToken() + "}"
	err = c.Do(ctx, c.B().Arbitrary("SET").Keys(scratch).Args("v", "IFEQ", "v").Build()).Error()
	switch {
	case err == nil || valkey.IsValkeyNil(err):
		caps[CapIFEQ] = true
	case isErrorReply(err):
		caps[CapIFEQ] = false
	default:
		return nil, fmt.Errorf("probe: SET IFEQ: %w", err)
	}
	err = c.Do(ctx, c.B().Arbitrary("EVAL", "return 1", "0").Build()).Error()
	if err != nil && !isErrorReply(err) {
		return nil, fmt.Errorf("probe: EVAL: %w", err)
	}
	caps[CapLua] = err == nil
	return caps, nil
}

// commandInfo starts a probe's answer with COMMAND INFO DELIFEQ DELEX,
// nil for a command the server does not know.
func commandInfo(ctx context.Context, c valkey.Client) (Capabilities, error) {
	caps := Capabilities{}
	info, err := c.Do(ctx, c.B().Arbitrary("COMMAND", "INFO", "DELIFEQ", "DELEX").Build()).ToArray()
	if err != nil {
		return nil, fmt.Errorf("probe: COMMAND INFO: %w", err)
	}
	for i, cp := range []Capability{CapDELIFEQ, CapDELEX} {
		caps[cp] = i < len(info) && !info[i].IsNil()
	}
	return caps, nil
}

func isErrorReply(err error) bool {
	_, ok := valkey.IsValkeyErr(err)
	return ok
}

// UnsupportedError is a refusal: the build lacks commands the client kind
// needs. errors.Is(err, ErrUnsupported) holds for it.
type UnsupportedError struct {
	Kind, Server, Version string
	Missing               []Capability
}

func (e *UnsupportedError) Error() string {
	var parts []string
	for _, cp := range e.Missing {
		parts = append(parts, fmt.Sprintf("%s (%s)", cp, since[cp]))
	}
	build := e.Server
	if e.Version != "" {
		build = fmt.Sprintf("%s (%s)", e.Server, e.Version)
	}
	lacks := "does not have it"
	switch {
	case len(parts) == 2:
		lacks = "has neither"
	case len(parts) > 2:
		lacks = "has none of them"
	}
	return fmt.Sprintf("client %s needs %s; %s %s", e.Kind, strings.Join(parts, " and "), build, lacks)
}

func (e *UnsupportedError) Is(target error) bool { return target == ErrUnsupported }

// Refusal is why a build with caps cannot run kind: an *UnsupportedError
// naming what it lacks, or nil when it has everything kind needs. A run is
// refused with it before its workload starts, not failed halfway.
func (caps Capabilities) Refusal(kind, server, version string) error {
	missing := caps.Missing(kind)
	if len(missing) == 0 {
		return nil
	}
	return &UnsupportedError{Kind: kind, Server: server, Version: version, Missing: missing}
}

// ProbeNode asks one server, primary or replica, what it has without
// writing: COMMAND INFO DELIFEQ DELEX, whether COMMAND DOCS SET names the
// IFEQ option (a replica refuses SET as a write before it parses the
// options, so Probe's SET IFEQ cannot be tried on one), and EVAL_RO of a
// trivial script.
func ProbeNode(ctx context.Context, c valkey.Client) (Capabilities, error) {
	caps, err := commandInfo(ctx, c)
	if err != nil {
		return nil, err
	}
	docs, err := c.Do(ctx, c.B().Arbitrary("COMMAND", "DOCS", "SET").Build()).ToAny()
	if err != nil {
		return nil, fmt.Errorf("probe: COMMAND DOCS SET: %w", err)
	}
	caps[CapIFEQ] = strings.Contains(strings.ToUpper(fmt.Sprint(docs)), "IFEQ")
	err = c.Do(ctx, c.B().Arbitrary("EVAL_RO", "return 1", "0").Build()).Error()
	if err != nil && !isErrorReply(err) {
		return nil, fmt.Errorf("probe: EVAL_RO: %w", err)
	}
	caps[CapLua] = err == nil
	return caps, nil
}

// Missing lists what kind needs that caps lacks; nil for a kind whose
// needs are not known (an external adapter).
func (caps Capabilities) Missing(kind string) []Capability {
	var out []Capability
	for _, cp := range needs(kind) {
		if !caps[cp] {
			out = append(out, cp)
		}
	}
	return out
}

// NeedsKnown says whether kind's needs are known (a built-in or registered
// kind; not an external adapter).
func NeedsKnown(kind string) bool {
	_, ok := lookup(kind)
	return ok && !strings.HasPrefix(kind, ExternalPrefix)
}
