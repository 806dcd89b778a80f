package lockclient

import (
	"context"
	"crypto/sha1"
	"encoding/hex"
	"sync/atomic"
	"time"

	"github.com/valkey-io/valkey-go"
)

// The Redis-era lock: SET NX PX to acquire, and a script that compares the
// token before PEXPIRE or DEL, because before 8.1 and 9.0 no command did
// both in one step.
const (
	luaExtendSrc  = `if redis.call("GET", KEYS[1]) == ARGV[1] then return redis.call("PEXPIRE", KEYS[1], ARGV[2]) else return 0 end`
	luaReleaseSrc = `if redis.call("GET", KEYS[1]) == ARGV[1] then return redis.call("DEL", KEYS[1]) else return 0 end`
)

// luaScript runs by EVALSHA and falls back to EVAL on NOSCRIPT, as
// valkey.NewLuaScript does, but by hand so that each fallback is counted:
// a failover or restart empties the script cache, and the count shows it.
type luaScript struct {
	src, sha  string
	fallbacks *atomic.Int64
}

func newLuaScript(src string, fallbacks *atomic.Int64) luaScript {
	sum := sha1.Sum([]byte(src))
	return luaScript{src: src, sha: hex.EncodeToString(sum[:]), fallbacks: fallbacks}
}

func (s luaScript) exec(ctx context.Context, c valkey.CommandClient, key string, args ...string) valkey.ValkeyResult {
	res := c.Do(ctx, c.B().Arbitrary("EVALSHA", s.sha, "1").Keys(key).Args(args...).Build())
	if ve, ok := valkey.IsValkeyErr(res.Error()); ok && ve.IsNoScript() {
		s.fallbacks.Add(1)
		res = c.Do(ctx, c.B().Arbitrary("EVAL", s.src, "1").Keys(key).Args(args...).Build())
	}
	return res
}

// luaSteps are the extend and release steps of one lua client, sharing
// its fallback counter.
func luaSteps(fallbacks *atomic.Int64) (extendStep, releaseStep) {
	ext, rel := newLuaScript(luaExtendSrc, fallbacks), newLuaScript(luaReleaseSrc, fallbacks)
	extend := func(ctx context.Context, c valkey.CommandClient, key, token string, ttl time.Duration) Result {
		return oneOrZero(ctx, ext.exec(ctx, c, key, token, ms(ttl)))
	}
	release := func(ctx context.Context, c valkey.CommandClient, key, token string) Result {
		return oneOrZero(ctx, rel.exec(ctx, c, key, token))
	}
	return extend, release
}
