package compat

import (
	"context"
	"strings"

	"github.com/lockcheck/lockcheck/topology"
)

// optionCases observe what the lock commands accept beyond the lock's own
// calls: SET IFEQ with each option it may take, wrong arities of DELIFEQ
// and DELEX, and what Redis 8.4+ has that Valkey lacks or does otherwise
// (SET IFNE, IFDEQ with DIGEST, DELEX without a condition, IFEQ given
// twice). A library written against one server that sends these to the
// other finds out here, not in production.
func optionCases() []Case {
	ifeqWith := func(name string, opts []string, want string, ok func(string) bool, post func(context.Context, *env, string) string) Case {
		return Case{Name: "extend/ifeq-" + name, run: func(ctx context.Context, e *env) verdict {
			k := e.key("opt" + name)
			e.do(ctx, "SET", k, "t", "PX", "100000")
			got := e.do(ctx, append([]string{"SET", k, "t", "IFEQ", "t"}, opts...)...)
			if post != nil && !isRefusal(got) {
				got += post(ctx, e, k)
			}
			return expect(e.f[IFEQ], got, want, ok)
		}}
	}
	pttl := func(ctx context.Context, e *env, k string) string { return "; PTTL " + e.do(ctx, "PTTL", k) }
	return []Case{
		ifeqWith("get", []string{"GET"}, "t (the old value, set again)", equals("t"), nil),
		ifeqWith("ex", []string{"EX", "30"}, "OK; PTTL <= 30000", pttlBetween(1, 30000), pttl),
		ifeqWith("pxat", []string{"PXAT", "99999999999999"}, "OK", equals("OK"), nil),
		ifeqWith("exat", []string{"EXAT", "9999999999"}, "OK", equals("OK"), nil),
		{Name: "extend/ifeq-px-and-keepttl", run: func(ctx context.Context, e *env) verdict {
			return refusedEverywhere(e.f[IFEQ], e.do(ctx, "SET", e.key("optpxkeep"), "t", "IFEQ", "t", "PX", "100", "KEEPTTL"))
		}},
		{Name: "extend/ifeq-twice", run: func(ctx context.Context, e *env) verdict {
			k := e.key("opttwice")
			e.do(ctx, "SET", k, "t", "PX", "30000")
			got := e.do(ctx, "SET", k, "t", "IFEQ", "t", "IFEQ", "t")
			if e.f[IFEQRepeat] {
				return always(got, "OK (the last IFEQ counts)", equals("OK"))
			}
			return refusedEverywhere(e.f[IFEQ], got)
		}},
		{Name: "extend/ifne", run: func(ctx context.Context, e *env) verdict {
			k := e.key("optifne")
			e.do(ctx, "SET", k, "t", "PX", "30000")
			got := e.do(ctx, "SET", k, "w", "IFNE", "t")
			if got == topology.Nil {
				got += "; " + e.do(ctx, "SET", k, "w", "IFNE", "other") + "; GET " + e.do(ctx, "GET", k)
			}
			return expect(e.f[IFNE], got, "(nil) (equal); OK (differs); GET w", equals(topology.Nil+"; OK; GET w"))
		}},
		{Name: "extend/ifdeq-digest", run: func(ctx context.Context, e *env) verdict {
			k := e.key("optdigest")
			e.do(ctx, "SET", k, "t", "PX", "30000")
			d := e.do(ctx, "DIGEST", k)
			got := d
			if !isRefusal(d) {
				got = "DIGEST; " + e.do(ctx, "SET", k, "w", "IFDEQ", d) + "; GET " + e.do(ctx, "GET", k)
			}
			return expect(e.f[Digest], got, "DIGEST; OK (the digest matches); GET w", equals("DIGEST; OK; GET w"))
		}},
		{Name: "release/delex-no-condition", run: func(ctx context.Context, e *env) verdict {
			k := e.key("optdelex")
			e.do(ctx, "SET", k, "t", "PX", "30000")
			got := e.do(ctx, "DELEX", k)
			if got == "1" || got == "0" {
				got += "; EXISTS " + e.do(ctx, "EXISTS", k)
			}
			if e.f[DELEXBare] {
				return always(got, "1; EXISTS 0 (deleted whatever its value, like DEL)", equals("1; EXISTS 0"))
			}
			// Valkey: an unknown command, or (9.2) a condition required
			if strings.HasPrefix(got, "ERR") {
				return verdict{Unsupported, got, "refused: unknown command or a condition required"}
			}
			return verdict{Fail, got, "refused: unknown command or a condition required"}
		}},
		{Name: "release/delifeq-arity", run: func(ctx context.Context, e *env) verdict {
			return arity(e.f[DELIFEQ], e.do(ctx, "DELIFEQ", e.key("optarity")))
		}},
		{Name: "release/delex-arity", run: func(ctx context.Context, e *env) verdict {
			return arity(e.f[DELEX], e.do(ctx, "DELEX", e.key("optarity"), "IFEQ"))
		}},
	}
}

// arity: a command called with too few arguments answers "wrong number
// of arguments" on a build that has it (pass), unknown command on one
// that does not (unsupported).
func arity(has bool, got string) verdict {
	const want = "ERR wrong number of arguments"
	if has {
		return expect(true, got, want, contains("wrong number of arguments"))
	}
	return expect(false, got, want, nil)
}
