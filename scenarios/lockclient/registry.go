package lockclient

import (
	"fmt"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/valkey-io/valkey-go"
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
	// doc says in one line what the kind is: its commands, or a mutant's
	// bug. The reference pages (lockcheck docs) are written from it.
	doc string
	// notice says how the kind tells its holder that the lock is gone
	// (Traits.Notice).
	notice string
	build  func(name string, cfg Config) (Client, error)
}

// about returns k with its one-line description.
func (k kindSpec) about(doc string) kindSpec {
	k.doc = doc
	return k
}

// tells returns k with how it tells its holder of a loss.
func (k kindSpec) tells(notice string) kindSpec {
	k.notice = notice
	return k
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

// serverTells is how the built-in clients tell a holder of a loss: the
// server's own reply to the next call, reported as it came.
const serverTells = "the next extend answers nil (SET IFEQ) and the release 0 (DELIFEQ): the call reports the lock lost"

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
	"native": cmdKind(nativeNeeds, false, fixed(setNX, extendIFEQ, releaseDELIFEQ)).about("SET NX PX to acquire, SET IFEQ PX to extend, DELIFEQ to release; no fence").tells(serverTells),
	"fenced": cmdKind(nativeNeeds, true, fixed(fencedAcquire, extendIFEQ, releaseDELIFEQ)).about("acquires with MULTI SET NX PX + INCR EXEC: the fence, which the resource checks; extends and releases as native").tells(serverTells + "; the resource refuses a stale fence"),
	"delex":  cmdKind([]Capability{CapIFEQ, CapDELEX}, false, fixed(setNX, extendIFEQ, releaseDELEX)).about("as native, but releases with DELEX IFEQ"),
	"lua":    {needs: luaNeeds, build: newLuaClient, doc: "the Redis-era compare-and-pexpire and compare-and-delete scripts through EVALSHA, with EVAL on NOSCRIPT"},

	"mutant-del":            cmdKind([]Capability{CapIFEQ}, false, fixed(setNX, extendIFEQ, releaseDEL)).about("bug: releases with a plain DEL, deleting whichever client's lock is there"),
	"mutant-extend-nopx":    cmdKind(nativeNeeds, false, fixed(setNX, extendNoPX, releaseDELIFEQ)).about("bug: extends with SET IFEQ and no PX, which drops the TTL"),
	"mutant-extend-keepttl": cmdKind(nativeNeeds, false, fixed(setNX, extendKeepTTL, releaseDELIFEQ)).about("bug: extends with KEEPTTL, so the deadline does not move"),
	"mutant-fence-outside": cmdKind(nativeNeeds, true, func(cfg Config) (acquireStep, extendStep, releaseStep) {
		return fenceOutside(cfg), extendIFEQ, releaseDELIFEQ
	}).about("bug: draws the fence with an INCR after the SET, not in one MULTI"),
	"mutant-reacquire": cmdKind(nativeNeeds, false, fixed(setNX, reacquireOnNil(extendIFEQ), releaseDELIFEQ)).about("bug: hides a nil extend behind a quiet SET NX and reports the extend done"),
	"mutant-setnx-expire": cmdKind([]Capability{CapDELIFEQ}, false, func(cfg Config) (acquireStep, extendStep, releaseStep) {
		return setNXThenExpire(cfg), extendIFEQ, releaseDELIFEQ
	}).about("bug: acquires with SET NX, then PEXPIRE: frozen between them, the key has no expiry"),
	"mutant-release-get-del": cmdKind([]Capability{CapIFEQ}, false, func(cfg Config) (acquireStep, extendStep, releaseStep) {
		return setNX, extendIFEQ, releaseGetThenDel(cfg)
	}).about("bug: releases with GET, compare, then DEL: frozen between them, it deletes the next holder's lock"),
	"mutant-extend-blind":          cmdKind([]Capability{CapDELIFEQ}, false, fixed(setNX, extendBlind, releaseDELIFEQ)).about("bug: extends with PEXPIRE, never comparing the value: it extends the next holder's lock"),
	"mutant-extend-ignores-reply":  cmdKind(nativeNeeds, false, fixed(setNX, ignoreReply(extendIFEQ), releaseDELIFEQ)).about("bug: reads a nil extend as success and goes on believing it holds"),
	"mutant-shared-token":          {needs: nativeNeeds, build: newSharedTokenClient, doc: "bug: stores one value for every acquisition, so a stalled holder's extend and release act on the next holder's lock"},
	"mutant-timeout-held":          cmdKind(nativeNeeds, false, fixed(timeoutHeld(setNX), extendIFEQ, releaseDELIFEQ)).about("bug: takes an acquire that got no reply in time for one that succeeded"),
	"mutant-release-fallback-del":  cmdKind(nativeNeeds, false, fixed(setNX, extendIFEQ, releaseFallbackDEL)).about("bug: when DELIFEQ answers 0, deletes the key with a plain DEL: the next holder's lock"),
	"mutant-release-ignores-reply": cmdKind(nativeNeeds, false, fixed(setNX, extendIFEQ, releaseIgnoresReply)).about("bug: reads DELIFEQ's 0 as success: a lost lock is reported released"),
	"mutant-extend-overwrite":      cmdKind(nativeNeeds, false, fixed(setNX, extendOverwrite, releaseDELIFEQ)).about("bug: extends with SET key token PX, without IFEQ: after its lease it takes the key from the next holder"),
	"mutant-extend-get-pexpire": cmdKind([]Capability{CapDELIFEQ}, false, func(cfg Config) (acquireStep, extendStep, releaseStep) {
		return setNX, extendGetThenPexpire(cfg), releaseDELIFEQ
	}).about("bug: extends with GET, compare, then PEXPIRE: frozen between them past its lease, it extends the next holder's lock"),

	"redlock":                    redlockKind(redlockBug{}).about("the published Redlock algorithm over independent primaries: SET NX PX on every node, held when a majority said OK within the validity time"),
	"mutant-redlock-no-validity": redlockKind(redlockBug{noValidity: true}).about("bug: Redlock that takes a majority's OK for a hold whatever time the acquire took"),
	"mutant-redlock-any-node":    redlockKind(redlockBug{anyNode: true}).about("bug: Redlock that takes one node's OK for a hold"),
	"mutant-redlock-fixed-token": redlockKind(redlockBug{fixedToken: true}).about("bug: Redlock with one value for every acquisition of every client"),

	"redsync": {needs: luaNeeds, library: true, majority: true, build: newRedsync, doc: "go-redsync/redsync v4 with its valkey-go pool; one pool per node on a redlock topology",
		notice: "Mutex.ExtendContext returns false with ErrExtendFailed or ErrTaken; Mutex.UnlockContext returns false with ErrLockAlreadyExpired; no callback (Until is a local deadline only)"},
	"redislock": {needs: luaNeeds, library: true, build: newRedislock, doc: "bsm/redislock on go-redis v9 (Lua to obtain, refresh and release)",
		notice: "Lock.Refresh returns ErrNotObtained; Lock.Release returns ErrLockNotHeld; Lock.TTL returns 0 once the token is gone; no callback"},
	"valkeylock": {needs: luaNeeds, library: true, opaque: true, build: newValkeylock, doc: "valkey-go's valkeylock; its adapter lets a lock the workload neither extends nor releases lapse after its TTL",
		notice: "no extend call (it renews in the background): the context WithContext returned is cancelled when a renewal fails, with no reason given; the release (the cancel function) reports nothing"},
	"glide": {needs: nativeNeeds, library: true, build: newGlide, doc: "Valkey GLIDE's Go client (Rust core, cgo): SET NX PX, SET IFEQ PX and DELIFEQ as the native client; no Sentinel mode",
		notice: "no lock API: SetWithOptions with OnlyIfEquals returns a nil result and no error, CustomCommand DELIFEQ returns 0 and no error; code that checks only the error never notices"},
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
// server: Probe and Capabilities.Refusal do that once per run.
func NewClient(kind string, cfg Config) (Client, error) {
	cfg = cfg.WithDefaults()
	if cfg.Late != nil {
		cfg.Option.DialCtxFn = cfg.Late.Wrap(cfg.Option.DialCtxFn)
		nodes := make([]valkey.ClientOption, len(cfg.Nodes))
		for i, n := range cfg.Nodes {
			n.DialCtxFn = cfg.Late.Wrap(n.DialCtxFn)
			nodes[i] = n
		}
		cfg.Nodes = nodes
	}
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

// ValidateKind refuses, in one line that lists the kinds, a kind that is
// neither built in nor registered nor an external adapter with a command:
// a flag or a scenario naming one fails before anything starts.
func ValidateKind(kind string) error {
	if cmd, ok := strings.CutPrefix(kind, ExternalPrefix); ok {
		if strings.TrimSpace(cmd) == "" {
			return fmt.Errorf("client %q names no adapter command: give external:CMD, e.g. external:./my-adapter", kind)
		}
		return nil
	}
	if Known(kind) {
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
	// Doc says in one line what the kind is, for lockcheck docs.
	Doc string
	// Notice says through which API the holder learns that its lock is
	// gone (an error from extend, a callback, a context cancelled,
	// nothing): the report card's notes. Empty when not known.
	Notice string
}

// TraitsOf says what a built-in or registered kind is; ok is false for an
// unknown kind.
func TraitsOf(kind string) (tr Traits, ok bool) {
	spec, ok := lookup(kind)
	if !ok {
		return Traits{}, false
	}
	return Traits{Needs: spec.needs, Fenced: spec.fenced, Library: spec.library, Opaque: spec.opaque, Doc: spec.doc, Notice: spec.notice}, true
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
	registry[kind] = kindSpec{needs: tr.Needs, fenced: tr.Fenced, library: tr.Library, opaque: tr.Opaque, doc: tr.Doc, notice: tr.Notice,
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
