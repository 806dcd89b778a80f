package compat

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/lockcheck/lockcheck/topology"
)

// The Redis-era lock scripts, as the distlock page and lock libraries ship
// them.
const (
	compareAndDelete  = `if redis.call("get", KEYS[1]) == ARGV[1] then return redis.call("del", KEYS[1]) else return 0 end`
	compareAndPexpire = `if redis.call("get", KEYS[1]) == ARGV[1] then return redis.call("pexpire", KEYS[1], ARGV[2]) else return 0 end`
)

func scriptCases() []Case {
	return []Case{
		{Name: "lua/compare-and-delete", run: func(ctx context.Context, e *env) verdict {
			k := e.key("luadel")
			e.do(ctx, "SET", k, "t", "PX", "30000")
			obs := e.eval(ctx, compareAndDelete, k, "other") + "; " + e.eval(ctx, compareAndDelete, k, "t")
			return always(obs, "0 (mismatch); 1 (match)", equals("0; 1"))
		}},
		{Name: "lua/compare-and-pexpire", run: func(ctx context.Context, e *env) verdict {
			k := e.key("luaexp")
			e.do(ctx, "SET", k, "t", "PX", "100000")
			obs := e.eval(ctx, compareAndPexpire, k, "t", "30000") + "; PTTL " + e.do(ctx, "PTTL", k)
			return always(obs, "1; PTTL <= 30000", pttlBetween(1, 30000))
		}},
		{Name: "lua/evalsha-after-flush", run: func(ctx context.Context, e *env) verdict {
			k := e.key("luaflush")
			n, err := e.t.Primary(ctx, k)
			if err != nil {
				return verdict{Fail, err.Error(), ""}
			}
			sha, err := n.Do(ctx, "SCRIPT", "LOAD", compareAndDelete)
			if err != nil {
				return verdict{Fail, err.Error(), ""}
			}
			before := nodeDo(ctx, n, "EVALSHA", sha, "1", k, "t")
			flush := nodeDo(ctx, n, "SCRIPT", "FLUSH")
			after := nodeDo(ctx, n, "EVALSHA", sha, "1", k, "t")
			obs := fmt.Sprintf("before %s; SCRIPT FLUSH %s; after %s", before, flush, after)
			return always(obs, "before 0; after NOSCRIPT", func(string) bool { return before == "0" && strings.HasPrefix(after, "NOSCRIPT") })
		}},
		{Name: "lua/scripting-engines", run: func(ctx context.Context, e *env) verdict {
			n, err := e.t.Primary(ctx, e.key("engines"))
			if err != nil {
				return verdict{Fail, err.Error(), ""}
			}
			info, err := n.Info(ctx, "scriptingengines")
			if err != nil {
				return verdict{Fail, err.Error(), ""}
			}
			obs := "engines_count " + orNone(info["engines_count"])
			if e0 := info["engine_0"]; e0 != "" {
				obs += "; engine_0 " + e0
			}
			if e.f[EnginesInfo] {
				return always(obs, "engines_count 1; engine_0 name=LUA", func(s string) bool {
					return info["engines_count"] == "1" && strings.Contains(strings.ToUpper(info["engine_0"]), "LUA")
				})
			}
			return always(obs, "engines_count (none): no such section", equals("engines_count (none)"))
		}},
	}
}

// lastCases change the server for good and run after everything else.
func lastCases() []Case {
	return []Case{
		{Name: "lua/without-engine", Kinds: []topology.Kind{topology.Standalone}, run: func(ctx context.Context, e *env) verdict {
			n := e.t.Servers()[0]
			unload := nodeDo(ctx, n, "MODULE", "UNLOAD", "lua")
			if !e.f[LuaModule] {
				if unload == "OK" {
					return verdict{Fail, "MODULE UNLOAD lua: OK", "no Lua module to unload"}
				}
				return verdict{Unsupported, "MODULE UNLOAD lua: " + unload, "Lua is built in, not a module"}
			}
			obs := "MODULE UNLOAD lua: " + unload + "; EVAL: " + e.eval(ctx, compareAndDelete, e.key("nolua"), "t")
			return always(obs, "OK; EVAL: ERR Could not find scripting engine 'lua'", func(string) bool {
				return unload == "OK" && strings.Contains(obs, "scripting engine")
			})
		}},
	}
}

func (e *env) eval(ctx context.Context, script, key string, args ...string) string {
	all := append([]string{"EVAL", script, "1", key}, args...)
	return replyOrError(e.c.Do(ctx, e.c.B().Arbitrary(all[0]).Args(all[1:3]...).Keys(key).Args(args...).Build()))
}

// nodeDo runs a command on one node and returns its reply or the server's
// error text. A broken connection is retried once: Sentinel kills the
// clients of a node it reconfigures.
func nodeDo(ctx context.Context, n *topology.Node, args ...string) string {
	s, err := n.Do(ctx, args...)
	var se topology.ServerError
	if err != nil && !errors.As(err, &se) {
		s, err = n.Do(ctx, args...)
	}
	if err != nil {
		msg := err.Error()
		// Node.Do prefixes the command and node; keep the server's words.
		if i := strings.Index(msg, ": "); i >= 0 {
			msg = msg[i+2:]
		}
		return msg
	}
	return s
}
