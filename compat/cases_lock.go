package compat

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/lockcheck/lockcheck/topology"
)

// lockCases observe acquire, extend and release on the primary through a
// client that follows the topology.
func lockCases() []Case {
	return []Case{
		{Name: "acquire/free", run: func(ctx context.Context, e *env) verdict {
			return always(e.do(ctx, "SET", e.key("acq"), "t1", "NX", "PX", "30000"), "OK", equals("OK"))
		}},
		{Name: "acquire/held", run: func(ctx context.Context, e *env) verdict {
			return always(e.do(ctx, "SET", e.key("acq"), "t2", "NX", "PX", "30000"), topology.Nil, equals(topology.Nil))
		}},
		{Name: "extend/held", run: func(ctx context.Context, e *env) verdict {
			k := e.key("ext")
			e.do(ctx, "SET", k, "t", "PX", "100000")
			got := e.do(ctx, "SET", k, "t", "IFEQ", "t", "PX", "30000")
			if got != "OK" {
				return expect(e.f[IFEQ], got, "OK; PTTL <= 30000", equals(""))
			}
			obs := got + "; PTTL " + e.do(ctx, "PTTL", k)
			return expect(e.f[IFEQ], obs, "OK; PTTL <= 30000 (the TTL is replaced)", pttlBetween(1, 30000))
		}},
		{Name: "extend/mismatch", run: func(ctx context.Context, e *env) verdict {
			k := e.key("extmis")
			e.do(ctx, "SET", k, "other", "PX", "30000")
			got := e.do(ctx, "SET", k, "t", "IFEQ", "t", "PX", "30000")
			if got == topology.Nil {
				got += "; GET " + e.do(ctx, "GET", k)
			}
			return expect(e.f[IFEQ], got, "(nil); GET other", equals(topology.Nil+"; GET other"))
		}},
		{Name: "extend/missing", run: func(ctx context.Context, e *env) verdict {
			k := e.key("extmiss")
			got := e.do(ctx, "SET", k, "t", "IFEQ", "t", "PX", "30000")
			if got == topology.Nil {
				got += "; EXISTS " + e.do(ctx, "EXISTS", k)
			}
			return expect(e.f[IFEQ], got, "(nil); EXISTS 0 (not created)", equals(topology.Nil+"; EXISTS 0"))
		}},
		{Name: "extend/no-px-drops-ttl", run: func(ctx context.Context, e *env) verdict {
			k := e.key("extnopx")
			e.do(ctx, "SET", k, "t", "PX", "30000")
			got := e.do(ctx, "SET", k, "t", "IFEQ", "t")
			if got == "OK" {
				got += "; PTTL " + e.do(ctx, "PTTL", k)
			}
			return expect(e.f[IFEQ], got, "OK; PTTL -1 (the lock never expires)", equals("OK; PTTL -1"))
		}},
		{Name: "extend/keepttl", run: func(ctx context.Context, e *env) verdict {
			k := e.key("extkeep")
			e.do(ctx, "SET", k, "t", "PX", "5000")
			got := e.do(ctx, "SET", k, "t", "IFEQ", "t", "KEEPTTL")
			if got == "OK" {
				got += "; PTTL " + e.do(ctx, "PTTL", k)
			}
			return expect(e.f[IFEQ], got, "OK; PTTL <= 5000 (the old deadline stays)", pttlBetween(1, 5000))
		}},
		{Name: "extend/ifeq-with-nx", run: func(ctx context.Context, e *env) verdict {
			got := e.do(ctx, "SET", e.key("nx"), "t", "IFEQ", "t", "NX")
			if e.f[IFEQWithNX] {
				return always(got, "(nil): accepted, and not done on a missing key", equals(topology.Nil))
			}
			return refusedEverywhere(e.f[IFEQ], got)
		}},
		{Name: "extend/ifeq-with-xx", run: func(ctx context.Context, e *env) verdict {
			return refusedEverywhere(e.f[IFEQ], e.do(ctx, "SET", e.key("xx"), "t", "XX", "IFEQ", "t"))
		}},
		{Name: "extend/wrongtype", run: func(ctx context.Context, e *env) verdict {
			k := e.key("extlist")
			e.do(ctx, "RPUSH", k, "x")
			return expect(e.f[IFEQ], e.do(ctx, "SET", k, "t", "IFEQ", "t", "PX", "30000"), "WRONGTYPE", contains("WRONGTYPE"))
		}},
		{Name: "release/delifeq-held", run: func(ctx context.Context, e *env) verdict {
			k := e.key("rel")
			e.do(ctx, "SET", k, "t", "PX", "30000")
			got := e.do(ctx, "DELIFEQ", k, "t")
			if got == "1" {
				got += "; EXISTS " + e.do(ctx, "EXISTS", k)
			}
			return expect(e.f[DELIFEQ], got, "1; EXISTS 0", equals("1; EXISTS 0"))
		}},
		{Name: "release/delifeq-mismatch", run: func(ctx context.Context, e *env) verdict {
			k := e.key("relmis")
			e.do(ctx, "SET", k, "other", "PX", "30000")
			got := e.do(ctx, "DELIFEQ", k, "t")
			if got == "0" {
				got += "; EXISTS " + e.do(ctx, "EXISTS", k)
			}
			return expect(e.f[DELIFEQ], got, "0; EXISTS 1", equals("0; EXISTS 1"))
		}},
		{Name: "release/delifeq-missing", run: func(ctx context.Context, e *env) verdict {
			return expect(e.f[DELIFEQ], e.do(ctx, "DELIFEQ", e.key("relmiss"), "t"), "0", equals("0"))
		}},
		{Name: "release/delifeq-wrongtype", run: func(ctx context.Context, e *env) verdict {
			k := e.key("rellist")
			e.do(ctx, "RPUSH", k, "x")
			return expect(e.f[DELIFEQ], e.do(ctx, "DELIFEQ", k, "t"), "WRONGTYPE", contains("WRONGTYPE"))
		}},
		{Name: "release/delex-ifeq", run: func(ctx context.Context, e *env) verdict {
			k := e.key("delex")
			e.do(ctx, "SET", k, "t", "PX", "30000")
			got := e.do(ctx, "DELEX", k, "IFEQ", "other")
			if got == "0" {
				got += "; " + e.do(ctx, "DELEX", k, "IFEQ", "t") + "; EXISTS " + e.do(ctx, "EXISTS", k)
			}
			return expect(e.f[DELEX], got, "0 (mismatch); 1 (match); EXISTS 0", equals("0; 1; EXISTS 0"))
		}},
		{Name: "release/delex-ifne", run: func(ctx context.Context, e *env) verdict {
			k := e.key("delexne")
			e.do(ctx, "SET", k, "t", "PX", "30000")
			got := e.do(ctx, "DELEX", k, "IFNE", "t")
			if got == "0" {
				got += "; " + e.do(ctx, "DELEX", k, "IFNE", "other") + "; EXISTS " + e.do(ctx, "EXISTS", k)
			}
			return expect(e.f[DELEX], got, "0 (equal); 1 (differs); EXISTS 0", equals("0; 1; EXISTS 0"))
		}},
		{Name: "detect/command-info", run: commandInfo},
		{Name: "info/version", run: infoVersion},
	}
}

// commandInfo: COMMAND INFO names DELIFEQ and DELEX exactly where the
// build has them, so that a client can detect them without trying them.
func commandInfo(ctx context.Context, e *env) verdict {
	c := e.c
	arr, err := c.Do(ctx, c.B().Arbitrary("COMMAND", "INFO", "DELIFEQ", "DELEX").Build()).ToArray()
	if err != nil || len(arr) != 2 {
		return verdict{Fail, fmt.Sprintf("%v (%d entries)", err, len(arr)), "two entries"}
	}
	show := func(i int) string {
		if arr[i].IsNil() {
			return topology.Nil
		}
		return "known"
	}
	want := func(f Feature) string {
		if e.f[f] {
			return "known"
		}
		return topology.Nil
	}
	obs := "DELIFEQ " + show(0) + ", DELEX " + show(1)
	w := "DELIFEQ " + want(DELIFEQ) + ", DELEX " + want(DELEX)
	return always(obs, w, equals(w))
}

// infoVersion: INFO server reports the build's version, in valkey_version
// with redis_version held at 7.2.4 on Valkey, in redis_version on Redis.
func infoVersion(ctx context.Context, e *env) verdict {
	n, err := e.t.Primary(ctx, e.key("info"))
	if err != nil {
		return verdict{Fail, err.Error(), ""}
	}
	info, err := n.Info(ctx, "server")
	if err != nil {
		return verdict{Fail, err.Error(), ""}
	}
	obs := fmt.Sprintf("valkey_version=%s redis_version=%s", orNone(info["valkey_version"]), info["redis_version"])
	b := e.t.Build
	if e.f[CompatVersion] {
		w := "valkey_version=" + b.Version + " redis_version=7.2.4"
		return always(obs, w, func(string) bool { return b.VersionMatches(info["valkey_version"]) && info["redis_version"] == "7.2.4" })
	}
	w := "redis_version=" + b.Version
	return always(obs, w, func(string) bool { return b.VersionMatches(info["redis_version"]) && info["valkey_version"] == "" })
}

// refusedEverywhere: IFEQ with NX or XX is a syntax error on a build with
// IFEQ (pass) and on one without it (unsupported: IFEQ itself is unknown).
func refusedEverywhere(has bool, got string) verdict {
	if !strings.Contains(got, "syntax error") {
		return verdict{Fail, got, "ERR syntax error"}
	}
	if has {
		return verdict{Pass, got, "ERR syntax error"}
	}
	return verdict{Unsupported, got, "ERR syntax error (IFEQ itself is unknown)"}
}

// pttlBetween accepts "OK; PTTL n" with lo <= n <= hi.
func pttlBetween(lo, hi int) func(string) bool {
	return func(s string) bool {
		_, p, ok := strings.Cut(s, "PTTL ")
		if !ok {
			return false
		}
		n, err := strconv.Atoi(p)
		return err == nil && n >= lo && n <= hi
	}
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}
