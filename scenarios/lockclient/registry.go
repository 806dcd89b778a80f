package lockclient

import (
	"fmt"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
)

// ExternalPrefix starts a kind that runs an adapter process:
// "external:/usr/bin/python3 adapters/python/redis_py_adapter.py".
const ExternalPrefix = "external:"

// kindSpec is one client kind: what it needs from the server, whether it
// draws fences, and how to build it.
type kindSpec struct {
	needs  []Capability
	fenced bool
	// library marks adapters of real libraries: they own their connections,
	// so WAIT cannot follow their acquire on the same one.
	library bool
	// majority marks a kind that locks a majority of the independent
	// servers it is given (Config.Nodes): Redlock.
	majority bool
	// opaque marks a kind whose lock key or stored value is its own, not
	// the key and token the history names: the observer cannot read it.
	opaque bool
	build  func(name string, cfg Config) (Client, error)
}

// cmdKind builds a command-level client from its steps.
func cmdKind(needs []Capability, fenced bool, steps func(cfg Config) (acquireStep, extendStep, releaseStep)) kindSpec {
	return kindSpec{needs: needs, fenced: fenced, build: func(name string, cfg Config) (Client, error) {
		a, e, r := steps(cfg)
		return newCmdClient(name, cfg, a, e, r)
	}}
}

func fixed(a acquireStep, e extendStep, r releaseStep) func(Config) (acquireStep, extendStep, releaseStep) {
	return func(Config) (acquireStep, extendStep, releaseStep) { return a, e, r }
}

var (
	nativeNeeds = []Capability{CapIFEQ, CapDELIFEQ}
	luaNeeds    = []Capability{CapLua}
)

// registryMu guards registry: a library's tests register kinds while
// other tests run.
var registryMu sync.RWMutex

// registry holds every built-in kind, and the kinds Register added. Adding
// a built-in kind is one entry.
var registry = map[string]kindSpec{
	"native": cmdKind(nativeNeeds, false, fixed(setNX, extendIFEQ, releaseDELIFEQ)),
	"fenced": cmdKind(nativeNeeds, true, fixed(fencedAcquire, extendIFEQ, releaseDELIFEQ)),
	"delex":  cmdKind([]Capability{CapIFEQ, CapDELEX}, false, fixed(setNX, extendIFEQ, releaseDELEX)),
	"lua":    {needs: luaNeeds, build: newLuaClient},

	"mutant-del":            cmdKind([]Capability{CapIFEQ}, false, fixed(setNX, extendIFEQ, releaseDEL)),
	"mutant-extend-nopx":    cmdKind(nativeNeeds, false, fixed(setNX, extendNoPX, releaseDELIFEQ)),
	"mutant-extend-keepttl": cmdKind(nativeNeeds, false, fixed(setNX, extendKeepTTL, releaseDELIFEQ)),
	"mutant-fence-outside": cmdKind(nativeNeeds, true, func(cfg Config) (acquireStep, extendStep, releaseStep) {
		return fenceOutside(cfg), extendIFEQ, releaseDELIFEQ
	}),
	"mutant-reacquire": cmdKind(nativeNeeds, false, fixed(setNX, reacquireOnNil(extendIFEQ), releaseDELIFEQ)),
	"mutant-setnx-expire": cmdKind([]Capability{CapDELIFEQ}, false, func(cfg Config) (acquireStep, extendStep, releaseStep) {
		return setNXThenExpire(cfg), extendIFEQ, releaseDELIFEQ
	}),
	"mutant-release-get-del": cmdKind([]Capability{CapIFEQ}, false, func(cfg Config) (acquireStep, extendStep, releaseStep) {
		return setNX, extendIFEQ, releaseGetThenDel(cfg)
	}),
	"mutant-extend-blind":          cmdKind([]Capability{CapDELIFEQ}, false, fixed(setNX, extendBlind, releaseDELIFEQ)),
	"mutant-extend-ignores-reply":  cmdKind(nativeNeeds, false, fixed(setNX, ignoreReply(extendIFEQ), releaseDELIFEQ)),
	"mutant-shared-token":          {needs: nativeNeeds, build: newSharedTokenClient},
	"mutant-timeout-held":          cmdKind(nativeNeeds, false, fixed(timeoutHeld(setNX), extendIFEQ, releaseDELIFEQ)),
	"mutant-release-fallback-del":  cmdKind(nativeNeeds, false, fixed(setNX, extendIFEQ, releaseFallbackDEL)),
	"mutant-release-ignores-reply": cmdKind(nativeNeeds, false, fixed(setNX, extendIFEQ, releaseIgnoresReply)),
	"mutant-extend-overwrite":      cmdKind(nativeNeeds, false, fixed(setNX, extendOverwrite, releaseDELIFEQ)),
	"mutant-extend-get-pexpire": cmdKind([]Capability{CapDELIFEQ}, false, func(cfg Config) (acquireStep, extendStep, releaseStep) {
		return setNX, extendGetThenPexpire(cfg), releaseDELIFEQ
	}),

	"redlock":                    redlockKind(redlockBug{}),
	"mutant-redlock-no-validity": redlockKind(redlockBug{noValidity: true}),
	"mutant-redlock-any-node":    redlockKind(redlockBug{anyNode: true}),
	"mutant-redlock-fixed-token": redlockKind(redlockBug{fixedToken: true}),

	"redsync":    {needs: luaNeeds, library: true, majority: true, build: newRedsync},
	"redislock":  {needs: luaNeeds, library: true, build: newRedislock},
	"valkeylock": {needs: luaNeeds, library: true, opaque: true, build: newValkeylock},
}

// Kinds lists the built-in client kinds, sorted; "external:CMD" is the one
// open-ended kind.
func Kinds() []string {
	registryMu.RLock()
	defer registryMu.RUnlock()
	out := make([]string, 0, len(registry))
	for k := range registry {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// NewClient builds one logical client of kind. It does not probe the
// server: Probe and Capabilities.Check do that once per run.
func NewClient(kind string, cfg Config) (Client, error) {
	cfg = cfg.WithDefaults()
	if cmd, ok := strings.CutPrefix(kind, ExternalPrefix); ok {
		if cfg.Wait.Enabled() {
			return nil, fmt.Errorf("client %s: the adapter protocol has no WAIT option", kind)
		}
		return newExternal(cmd, cfg)
	}
	spec, ok := lookup(kind)
	if !ok {
		return nil, unknownKind(kind)
	}
	if spec.library && cfg.Wait.Enabled() {
		return nil, fmt.Errorf("client %s cannot WAIT after its acquire: the library owns its connections, and WAIT counts only the writes of its own", kind)
	}
	return spec.build(kind, cfg)
}

func unknownKind(kind string) error {
	return fmt.Errorf("unknown client %q: choose one of %s, or external:CMD", kind, strings.Join(Kinds(), ", "))
}

// lookup finds kind's spec.
func lookup(kind string) (kindSpec, bool) {
	registryMu.RLock()
	defer registryMu.RUnlock()
	spec, ok := registry[kind]
	return spec, ok
}

// Known reports whether kind names a built-in or registered client.
func Known(kind string) bool {
	_, ok := lookup(kind)
	return ok
}

// Check refuses, in one line that lists the kinds, a kind that is neither
// built in nor external.
func Check(kind string) error {
	if strings.HasPrefix(kind, ExternalPrefix) || Known(kind) {
		return nil
	}
	return unknownKind(kind)
}

// Traits say what a registered kind is, beyond how it is built: what it
// needs from the server and how its locks may be judged and observed.
type Traits struct {
	// Needs are the server's capabilities the kind's commands use; a run
	// on a server without one is refused before it starts.
	Needs []Capability
	// Fenced: every OK acquire returns a fence (Result.HasFence), and the
	// resource accepts a write only with a fence above every earlier one.
	// Two holders under a fault are then allowed if the fence stops the
	// stale one.
	Fenced bool
	// Library: the client owns its connections, so WAIT cannot follow its
	// acquire on the same one.
	Library bool
	// Opaque: the lock key or the value in it are the client's own, not
	// the key the workload named holding the token the client returned,
	// so the observer does not read the key.
	Opaque bool
}

// Register adds a client kind with traits tr, built by build, until the
// returned function removes it: a test's own client, or a Go library's
// adapter run without forking lockcheck. A kind of the same name is
// refused.
func Register(kind string, tr Traits, build func(cfg Config) (Client, error)) (unregister func(), err error) {
	if strings.HasPrefix(kind, ExternalPrefix) {
		return nil, fmt.Errorf("client kind %q: the prefix %q names external adapters", kind, ExternalPrefix)
	}
	registryMu.Lock()
	defer registryMu.Unlock()
	if _, ok := registry[kind]; ok {
		return nil, fmt.Errorf("client kind %q is taken", kind)
	}
	registry[kind] = kindSpec{needs: tr.Needs, fenced: tr.Fenced, library: tr.Library, opaque: tr.Opaque,
		build: func(_ string, cfg Config) (Client, error) { return build(cfg) }}
	return func() {
		registryMu.Lock()
		defer registryMu.Unlock()
		delete(registry, kind)
	}, nil
}

// needs lists what kind needs from the server; external adapters are not
// probed (they report errors per call).
func needs(kind string) []Capability {
	spec, _ := lookup(kind)
	return spec.needs
}

// Observable says whether the observer can read kind's locks: the key the
// history names, holding the token the client reported. External adapters
// promise that in the adapter protocol.
func Observable(kind string) bool {
	spec, _ := lookup(kind)
	return !spec.opaque
}

// LocksMajority says whether kind locks a majority of the independent
// servers of a Redlock topology (Config.Nodes). External adapters are
// handed every node's address and may.
func LocksMajority(kind string) bool {
	if strings.HasPrefix(kind, ExternalPrefix) {
		return true
	}
	spec, _ := lookup(kind)
	return spec.majority
}

// DrawsFences says whether a built-in kind draws a fence with every
// acquire (an external adapter says so in its replies instead).
func DrawsFences(kind string) bool {
	spec, _ := lookup(kind)
	return spec.fenced
}

// newLuaClient counts its NOSCRIPT fallbacks.
func newLuaClient(name string, cfg Config) (Client, error) {
	var fallbacks atomic.Int64
	e, r := luaSteps(&fallbacks)
	c, err := newCmdClient(name, cfg, setNX, e, r)
	if err != nil {
		return nil, err
	}
	c.counts["noscript_fallbacks"] = &fallbacks
	return c, nil
}
