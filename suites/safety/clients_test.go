package safety_test

import (
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/lockcheck/lockcheck/checker"
	"github.com/lockcheck/lockcheck/history"
	"github.com/lockcheck/lockcheck/scenarios/fault"
	"github.com/lockcheck/lockcheck/topology"
)

// The Lua-era client, scripted around SCRIPT FLUSH: worker 0 acquires and
// extends (its scripts are cached by then), every server's script cache is
// flushed, and worker 0 releases: EVALSHA answers NOSCRIPT and the client
// must fall back to EVAL, then worker 1 takes and releases the lock.
var _ = Describe("the Lua-era client after SCRIPT FLUSH, scripted", func() {
	It("goes on working: EVALSHA answers NOSCRIPT and the client falls back to EVAL", Label(newest, string(topology.Standalone), "lua", "script-flush", "quick"), func(ctx SpecContext) {
		s := sharedScript(ctx, topology.Options{}, []string{"lua", "lua"}, nil)
		ttl := 10 * time.Second
		a := ok(s.Acquire(ctx, 0, key, ttl), "worker 0's acquire")
		ok(s.Extend(ctx, 0, key, a.Token, ttl), "the first extend, which loads the script")
		ok(s.Extend(ctx, 0, key, a.Token, ttl), "the second extend, from the cache")
		before := s.Counts(0)["noscript_fallbacks"]
		Expect(fault.ScriptFlush.Inject(ctx, s.FaultEnv(key, ttl))).To(Succeed())
		ok(s.Release(ctx, 0, key, a.Token), "worker 0's release after the flush")
		Expect(s.Counts(0)["noscript_fallbacks"]).To(Equal(before+1), "the release fell back to EVAL once")
		b := ok(s.Acquire(ctx, 1, key, ttl), "worker 1's acquire")
		ok(s.Release(ctx, 1, key, b.Token), "worker 1's release after the flush")
		h, r := judge(ctx, s)
		Expect(h.Faults).To(HaveLen(1))
		Expect(r.Verdict).To(Equal(checker.Safe), r.Summary)
	}, SpecTimeout(time.Minute))
})

// A rolling upgrade caught half way, scripted: Sentinel with its one
// promotable replica on valkey-8.1 (the other carries replica-priority 0);
// worker 0 locks and releases on 9.1, the mixed-version fault fails over
// to the 8.1 replica, and worker 0 locks again there: its DELIFEQ release
// is an unknown command.
var _ = Describe("a rolling upgrade caught half way, scripted", func() {
	It("shows DELIFEQ on a promoted 8.1 replica as an unknown-command error and a lost release", Label(newest, "valkey-8.1", string(topology.Sentinel), "native", "mixed-version", "quick"), func(ctx SpecContext) {
		old := env.Available["valkey-8.1"]
		if old.Image == "" {
			Skip("unavailable: " + old.Reason)
		}
		opts := topology.Options{NodeImages: map[string]string{"n1": old.Image}, NodeConfig: map[string][]string{"n2": {"replica-priority 0"}}}
		s := script(ctx, topology.Sentinel, opts, []string{"native"}, nil)
		ttl := 30 * time.Second
		a := ok(s.Acquire(ctx, 0, key, ttl), "the acquire on 9.1")
		ok(s.Release(ctx, 0, key, a.Token), "the release on 9.1")
		Expect(fault.MixedVersion.Inject(ctx, s.FaultEnv(key, ttl))).To(Succeed())
		b := ok(s.AcquireWithin(ctx, 0, key, ttl, 30*time.Second), "the acquire on the promoted 8.1 replica")
		rel := s.Release(ctx, 0, key, b.Token)
		Expect(rel.Outcome).To(Equal(history.Fail), "an unknown-command reply is a definite failure")
		Expect(rel.Err).To(ContainSubstring("unknown command"), "DELIFEQ reached the promoted 8.1 node")
		left, err := s.Observe(ctx, key)
		Expect(err).NotTo(HaveOccurred())
		Expect(left).To(BeNumerically(">", 0), "the release was lost: the lock stays until it expires")
		_, r := judge(ctx, s)
		rej := check(r, checker.Rejected)
		Expect(rej.Status).To(Equal(checker.Fail), "a release the server does not know fails the rejected check: %s", rej.Summary)
		Expect(r.Verdict).NotTo(Equal(checker.Safe), "a run whose releases fail is not reported safe: %s", r.Summary)
	}, SpecTimeout(3*time.Minute))
})

// Real libraries: their verdicts are recorded as they are. Nothing about
// their safety is asserted beyond what holds for every client: the run
// finishes and the checker decides.
var _ = Describe("real lock libraries under kill-primary", func() {
	for _, client := range []string{"redsync", "redislock", "valkeylock", "external:/usr/bin/python3 ../../adapters/python/redis_py_adapter.py"} {
		s := raceScenario(topology.Sentinel, client, 19, 30*time.Second)
		s.Clients = 4
		name := strings.Fields(client)[0]
		It(name+" runs and gets a verdict", Label(s.Server, string(s.Topology), "library", "kill-primary"), func(ctx SpecContext) {
			h, r := run(ctx, s)
			Expect(len(h.Ops)).To(BeNumerically(">", 10))
			Expect(r.Verdict).To(BeElementOf(checker.Safe, checker.Violated, checker.Undecided))
			AddReportEntry(name, string(r.Verdict)+": "+r.Summary)
		}, SpecTimeout(3*time.Minute))
	}
})
