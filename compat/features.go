// Package compat observes what every lock command does on a real server
// build and topology, and judges each reply against what that build is
// expected to do. Every cell of the matrix is observed: nothing is filled
// in from the table below, which only says what to expect.
package compat

// Feature is a lock-relevant capability a build may have.
type Feature string

const (
	// IFEQ: SET key value IFEQ cmp (Valkey 8.1, Redis 8.4).
	IFEQ Feature = "ifeq"
	// DELIFEQ: DELIFEQ key value (Valkey 9.0).
	DELIFEQ Feature = "delifeq"
	// DELEX: DELEX key IFEQ|IFNE value (Valkey 9.2-rc2, Redis 8.4).
	DELEX Feature = "delex"
	// WAITAOF: WAITAOF numlocal numreplicas timeout (Valkey, Redis 7.2).
	WAITAOF Feature = "waitaof"
	// EnginesInfo: INFO scriptingengines lists the Lua engine (Valkey 9.1).
	EnginesInfo Feature = "scriptingengines"
	// LuaModule: Lua is a module that can be unloaded (Valkey 9.1).
	LuaModule Feature = "lua-module"
	// IFEQWithNX: SET ... IFEQ ... NX is accepted rather than a syntax
	// error (observed on Redis 8.6.3: it replies nil; Valkey refuses it).
	IFEQWithNX Feature = "ifeq-with-nx"
	// IFNE: SET key value IFNE cmp (Redis 8.4; not in Valkey 9.2's
	// release notes).
	IFNE Feature = "ifne"
	// Digest: DIGEST key and SET ... IFDEQ digest (Redis 8.4).
	Digest Feature = "digest"
	// DELEXBare: DELEX key without a condition deletes like DEL (Redis
	// 8.4); Valkey 9.2's DELEX takes IFEQ or IFNE.
	DELEXBare Feature = "delex-bare"
	// IFEQRepeat: SET ... IFEQ a IFEQ b is accepted (observed on Redis
	// 8.6.3); Valkey answers a syntax error.
	IFEQRepeat Feature = "ifeq-repeat"
	// ASKAtExec: in a transaction on a migrating source, a command whose
	// key has moved is queued, and EXEC answers ASK (every key moved) or
	// TRYAGAIN (some) for the whole (observed on Valkey 9.1.2); Valkey 8.x
	// and Redis answer ASK to the command as it is queued, and EXEC then
	// EXECABORT. 9.0 and 9.2 are not observed here.
	ASKAtExec Feature = "ask-at-exec"
	// CompatVersion: redis_version stays 7.2.4 and valkey_version carries
	// the real version (every Valkey).
	CompatVersion Feature = "valkey-version"
)

// Features is what one build is expected to do.
type Features map[Feature]bool

// expected is the one table of expectations: a row per build, from each
// version's source and release notes and from the article lockcheck
// tests (README). Adding a build is one row.
var expected = map[string]Features{
	"valkey-8.0":    {WAITAOF: true, CompatVersion: true},
	"valkey-8.1":    {IFEQ: true, WAITAOF: true, CompatVersion: true},
	"valkey-9.0":    {IFEQ: true, DELIFEQ: true, WAITAOF: true, CompatVersion: true},
	"valkey-9.1":    {IFEQ: true, DELIFEQ: true, WAITAOF: true, CompatVersion: true, EnginesInfo: true, LuaModule: true, ASKAtExec: true},
	"valkey-9.2-rc": {IFEQ: true, DELIFEQ: true, DELEX: true, WAITAOF: true, CompatVersion: true, EnginesInfo: true, LuaModule: true, ASKAtExec: true},
	// 9.2 GA, from its release notes: what the release candidate has
	// (DELEX with an IFEQ/IFNE condition); not observed here (no image
	// offline), so no cell has confirmed it yet.
	"valkey-9.2": {IFEQ: true, DELIFEQ: true, DELEX: true, WAITAOF: true, CompatVersion: true, EnginesInfo: true, LuaModule: true, ASKAtExec: true},
	"redis-7.0":  {},
	"redis-8.6":  {IFEQ: true, IFEQWithNX: true, IFEQRepeat: true, IFNE: true, Digest: true, DELEXBare: true, DELEX: true, WAITAOF: true},
}

// Expected returns a build's row; a build not in the table (a user's own
// binary) is expected to do what the newest Valkey does.
func Expected(build string) Features {
	if f, ok := expected[build]; ok {
		return f
	}
	return expected["valkey-9.1"]
}
