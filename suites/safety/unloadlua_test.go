package safety_test

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/lockcheck/lockcheck/checker"
	"github.com/lockcheck/lockcheck/history"
	"github.com/lockcheck/lockcheck/scenarios/fault"
	"github.com/lockcheck/lockcheck/topology"
)

// unloadLuaOptions start servers that let the fault run MODULE UNLOAD.
func unloadLuaOptions() topology.Options {
	return topology.Options{ServerConfig: fault.UnloadLua.(fault.Configured).ServerConfig()}
}

// The Lua-era client when the servers lose Lua, scripted: worker 0
// acquires (SET NX) and extends by script, Lua is unloaded, and its
// release by script fails with an error reply (EVALSHA's NOSCRIPT, then
// EVAL's missing engine): the lock stays until its lease ends, and the
// rejected check says so.
var _ = Describe("the Lua-era client on servers without Lua, scripted", func() {
	It("fails its release with the missing engine's error and leaves the lock to expire", Label(newest, string(topology.Standalone), "lua", "unload-lua", "quick"), func(ctx SpecContext) {
		s := script(ctx, topology.Standalone, unloadLuaOptions(), []string{"lua"}, nil)
		ttl := 10 * time.Second
		a := ok(s.Acquire(ctx, 0, key, ttl), "the acquire")
		ok(s.Extend(ctx, 0, key, a.Token, ttl), "the extend, by script")
		Expect(fault.UnloadLua.Inject(ctx, s.FaultEnv(key, ttl))).To(Succeed())
		rel := s.Release(ctx, 0, key, a.Token)
		Expect(rel.Outcome).To(Equal(history.Fail), "an error reply is a definite failure: %+v", rel)
		Expect(rel.Err).To(ContainSubstring("scripting engine"), "EVAL found no Lua")
		left, err := s.Observe(ctx, key)
		Expect(err).NotTo(HaveOccurred())
		Expect(left).To(BeNumerically(">", 0), "the release did not delete: the lock stays until it expires")
		h, r := judge(ctx, s)
		Expect(h.Faults).To(HaveLen(1))
		Expect(h.Faults[0].Unmet).To(BeEmpty(), "Lua is a module on this build")
		Expect(check(r, checker.Rejected).Status).To(Equal(checker.Fail), "a release refused with an error fails the rejected check")
	}, SpecTimeout(time.Minute))

	It("says the fault could not make its moment where Lua is built in (valkey-8.1)", Label("valkey-8.1", string(topology.Standalone), "lua", "unload-lua", "quick"), func(ctx SpecContext) {
		old := env.Available["valkey-8.1"]
		if old.Image == "" {
			Skip("unavailable: " + old.Reason)
		}
		s := scriptOn(ctx, env.Start(ctx, "valkey-8.1", topology.Standalone, unloadLuaOptions()), []string{"lua"}, nil)
		ttl := 10 * time.Second
		Expect(fault.UnloadLua.Inject(ctx, s.FaultEnv(key, ttl))).To(Succeed())
		a := ok(s.Acquire(ctx, 0, key, ttl), "the acquire")
		ok(s.Release(ctx, 0, key, a.Token), "the release by script: Lua is still there")
		h, _ := judge(ctx, s)
		Expect(h.Faults).To(HaveLen(1))
		Expect(h.Faults[0].Unmet).To(ContainSubstring("built into this server"))
	}, SpecTimeout(time.Minute))
})
