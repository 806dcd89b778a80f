package safety_test

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/lockcheck/lockcheck/checker"
	"github.com/lockcheck/lockcheck/scenarios"
	"github.com/lockcheck/lockcheck/topology"
)

// newest is the newest Valkey line Debian ships, which the quick slice
// runs on.
const newest = "valkey-9.1"

// raceWork makes holds last longer than a failover (about 2 s) but end
// before the first extend (TTL/3 = 5 s): a holder whose lock was lost with
// the old primary still believes it holds when the new primary hands the
// lock out again.
func raceWork(w *scenarios.Workload) {
	w.WorkMin, w.WorkMax = 3*time.Second, 6*time.Second
}

var _ = Describe("the failover race", func() {
	for _, kind := range []topology.Kind{topology.Sentinel, topology.Cluster} {
		unfenced := scenario{build: newest, kind: kind, client: "native", faults: []scenarios.Fault{scenarios.KillPrimary},
			duration: 40 * time.Second, ttl: 15 * time.Second, seed: 7, clients: 6, keys: 1, workload: raceWork}
		It("hands one lock to two native clients when the primary dies", labels(unfenced, "quick"), func(ctx SpecContext) {
			h, r := run(ctx, unfenced)
			dh := check(r, "double_holder")
			Expect(dh.Status).To(Equal(checker.Fail), dh.Summary)
			Expect(dh.Count).To(BeNumerically(">=", 1))
			Expect(r.Verdict).To(Equal(checker.Violated))
			Expect(h.Faults).NotTo(BeEmpty())
			Expect(dh.Findings[0].Start).To(BeNumerically(">", h.Faults[0].Start), "the double holder came after the kill")
		}, SpecTimeout(3*time.Minute))

		fenced := unfenced
		fenced.client = "fenced"
		It("lets the resource reject the stale holder of a fenced client", labels(fenced, "quick"), func(ctx SpecContext) {
			h, r := run(ctx, fenced)
			Expect(h.Meta.Fenced).To(BeTrue())
			f := check(r, "fence")
			Expect(f.Status).To(Equal(checker.Pass), f.Summary)
			Expect(f.Count).To(BeZero())
			Expect(r.Verdict).NotTo(Equal(checker.Violated), r.Summary)
		}, SpecTimeout(3*time.Minute))
	}
})

var _ = Describe("a clock jump on the primary", func() {
	s := scenario{build: newest, kind: topology.Standalone, client: "native", faults: []scenarios.Fault{scenarios.ClockJump},
		duration: 15 * time.Second, ttl: 2 * time.Second, seed: 11, clients: 4, keys: 1}
	It("expires locks early and yields a double holder", labels(s, "quick"), func(ctx SpecContext) {
		_, r := run(ctx, s)
		dh := check(r, "double_holder")
		Expect(dh.Count).To(BeNumerically(">=", 1), dh.Summary)
		Expect(r.Verdict).To(Equal(checker.Violated))
	}, SpecTimeout(2*time.Minute))
})

var _ = Describe("a holder frozen past its TTL", func() {
	base := scenario{build: newest, kind: topology.Standalone, faults: []scenarios.Fault{scenarios.PauseClient},
		duration: 15 * time.Second, ttl: 2 * time.Second, seed: 23, clients: 4, keys: 1,
		workload: func(w *scenarios.Workload) { w.StallRate, w.WorkMin, w.WorkMax = -1, time.Second, 2*time.Second }}
	native := base
	native.client = "native"
	// Its lease ended while it slept, so its hold interval does too: the
	// harm shows where it lands, a lost increment at the resource.
	It("wakes up next to a new holder and loses an unfenced client's increment", labels(native, "quick"), func(ctx SpecContext) {
		h, r := run(ctx, native)
		Expect(h.Faults).NotTo(BeEmpty())
		Expect(h.Faults[0].Target).To(HavePrefix("worker"), "a holder took the pause")
		res := check(r, checker.Resource)
		Expect(res.Status).To(Equal(checker.Fail), res.Summary)
		Expect(r.Verdict).To(Equal(checker.Violated))
	}, SpecTimeout(2*time.Minute))

	fenced := base
	fenced.client = "fenced"
	It("cannot corrupt the resource of a fenced client", labels(fenced, "quick"), func(ctx SpecContext) {
		h, r := run(ctx, fenced)
		Expect(h.Faults).NotTo(BeEmpty())
		f := check(r, checker.Fence)
		Expect(f.Status).To(Equal(checker.Pass), f.Summary)
		Expect(r.Verdict).NotTo(Equal(checker.Violated), r.Summary)
	}, SpecTimeout(2*time.Minute))
})
