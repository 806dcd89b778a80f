package safety_test

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/lockcheck/lockcheck/checker"
	"github.com/lockcheck/lockcheck/scenarios"
	"github.com/lockcheck/lockcheck/topology"
)

// Every mutant is a known bug. Each runs in a scenario that provokes it
// (holders that stall past the TTL, work longer than the TTL, holders that
// never release), and the check its bug breaks must fail. The checks see
// only the history: they are never told which client ran.
var _ = Describe("mutant clients", func() {
	stalls := func(w *scenarios.Workload) {
		w.StallRate, w.WorkMin, w.WorkMax = 0.5, 50*time.Millisecond, 300*time.Millisecond
	}
	cases := []struct {
		client    string
		breaks    string
		why       string
		workload  func(*scenarios.Workload)
		configure func(*scenarios.ClientConfig)
	}{
		{"mutant-del", checker.Linearizability, "a plain DEL releases another client's lock after the first one's TTL ran out", stalls, nil},
		{"mutant-extend-nopx", checker.TTL, "an extend without PX leaves the lock without expiry",
			func(w *scenarios.Workload) {
				w.AbandonRate, w.WorkMin, w.WorkMax = 0.3, 600*time.Millisecond, 900*time.Millisecond
			}, nil},
		{"mutant-extend-keepttl", checker.DoubleHolder, "a KEEPTTL extend does not move the deadline, so long work outlives the lease",
			func(w *scenarios.Workload) {
				w.StallRate, w.WorkMin, w.WorkMax = -1, 1500*time.Millisecond, 3*time.Second
			}, nil},
		{"mutant-reacquire", checker.Resource, "a quiet re-acquire after a nil extend hides the lost lock, and two holders lose an increment", stalls, nil},
	}
	for _, c := range cases {
		s := scenario{build: newest, kind: topology.Standalone, client: c.client, duration: 15 * time.Second, ttl: time.Second,
			seed: 5, clients: 4, keys: 1, workload: c.workload, configure: c.configure}
		It(c.client+" is caught by "+c.breaks+": "+c.why, labels(s, "mutant", "quick"), func(ctx SpecContext) {
			_, r := run(ctx, s)
			chk := check(r, c.breaks)
			Expect(chk.Status).To(Equal(checker.Fail), chk.Summary)
			Expect(r.Verdict).To(Equal(checker.Violated))
		}, SpecTimeout(2*time.Minute))
	}
})
