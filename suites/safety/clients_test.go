package safety_test

import (
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/lockcheck/lockcheck/checker"
	"github.com/lockcheck/lockcheck/history"
	"github.com/lockcheck/lockcheck/scenarios"
	"github.com/lockcheck/lockcheck/topology"
)

var _ = Describe("the Lua-era client after SCRIPT FLUSH", func() {
	s := scenario{build: newest, kind: topology.Standalone, client: "lua", faults: []scenarios.Fault{scenarios.ScriptFlush},
		duration: 15 * time.Second, ttl: time.Second, seed: 13, clients: 4, keys: 1}
	It("goes on working: EVALSHA answers NOSCRIPT and the client falls back to EVAL", labels(s, "quick"), func(ctx SpecContext) {
		var last scenarios.Stats
		// No stalls: an unfenced holder that sleeps past its lease writes
		// stale data whatever its scripts do, and this spec is about the
		// scripts.
		s.workload = func(w *scenarios.Workload) {
			w.StallRate, w.Progress = -1, func(st scenarios.Stats) { last = st }
		}
		h, r := run(ctx, s)
		Expect(h.Faults).NotTo(BeEmpty(), "SCRIPT FLUSH ran")
		Expect(last.Client["noscript_fallbacks"]).To(BeNumerically(">", 0), "the fallback was exercised: %v", last)
		var after int
		for _, op := range h.Ops {
			if op.Kind == history.Release && op.Outcome == history.OK && op.Call > h.Faults[0].End {
				after++
			}
		}
		Expect(after).To(BeNumerically(">", 0), "releases still succeed after the flush")
		Expect(r.Verdict).To(Equal(checker.Safe), r.Summary)
	}, SpecTimeout(2*time.Minute))
})

var _ = Describe("a rolling upgrade caught half way", func() {
	s := scenario{build: newest, kind: topology.Sentinel, client: "native", faults: []scenarios.Fault{scenarios.MixedVersion},
		duration: 25 * time.Second, ttl: 2 * time.Second, seed: 17, clients: 4, keys: 1}
	It("shows DELIFEQ on a promoted 8.1 replica as an unknown-command error and a lost release", labels(s, "valkey-8.1", "quick"), func(ctx SpecContext) {
		old := env.Available["valkey-8.1"]
		if old.Image == "" {
			Skip("unavailable: " + old.Reason)
		}
		s.topo = topology.Options{NodeImages: map[string]string{"n1": old.Image}, NodeConfig: map[string][]string{"n2": {"replica-priority 0"}}}
		h, r := run(ctx, s)
		Expect(h.Faults).NotTo(BeEmpty())
		unknown := 0
		for _, op := range h.Ops {
			if op.Kind == history.Release && op.Call > h.Faults[0].Start && strings.Contains(op.Error, "unknown command") {
				Expect(op.Outcome).To(Equal(history.Fail), "an unknown-command reply is a definite failure")
				unknown++
			}
		}
		Expect(unknown).To(BeNumerically(">", 0), "DELIFEQ reached the promoted 8.1 node")
		rej := check(r, checker.Rejected)
		Expect(rej.Status).To(Equal(checker.Fail), "a release the server does not know fails the rejected check: %s", rej.Summary)
		lost := check(r, checker.LostLocks)
		Expect(lost.Count).To(BeNumerically(">", 0), lost.Summary)
		Expect(r.Verdict).NotTo(Equal(checker.Safe), "a run whose releases fail is not reported safe: %s", r.Summary)
	}, SpecTimeout(3*time.Minute))
})

// Real libraries: their verdicts are recorded as they are. Nothing about
// their safety is asserted beyond what holds for every client: the run
// finishes and the checker decides.
var _ = Describe("real lock libraries under kill-primary", func() {
	for _, client := range []string{"redsync", "redislock", "valkeylock", "external:/usr/bin/python3 ../../adapters/python/redis_py_adapter.py"} {
		s := scenario{build: newest, kind: topology.Sentinel, client: client, faults: []scenarios.Fault{scenarios.KillPrimary},
			duration: 30 * time.Second, ttl: 15 * time.Second, seed: 19, clients: 4, keys: 1, workload: raceWork}
		name := strings.Fields(client)[0]
		It(name+" runs and gets a verdict", Label(s.build, string(s.kind), "library", "kill-primary"), func(ctx SpecContext) {
			h, r := run(ctx, s)
			Expect(len(h.Ops)).To(BeNumerically(">", 10))
			Expect(r.Verdict).To(BeElementOf(checker.Safe, checker.Violated, checker.Undecided))
			AddReportEntry(name, string(r.Verdict)+": "+r.Summary)
		}, SpecTimeout(3*time.Minute))
	}
})
