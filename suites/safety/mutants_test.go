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
// only the history: they are never told which client ran. The correct
// client runs the same scenario beside each mutant and must pass that check,
// so a scenario that fails every client proves nothing about the mutant.
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
		// Holds long enough to extend after the stall, and as many keys as workers
		// so that the key is usually free when the staller wakes: its SET NX
		// then succeeds and is reported as an extend of a lease that had
		// certainly ended.
		{"mutant-reacquire", checker.Linearizability, "a quiet re-acquire after a nil extend reports an extend of a lease that had ended",
			func(w *scenarios.Workload) {
				w.StallRate, w.WorkMin, w.WorkMax, w.Keys = 0.5, 2500*time.Millisecond, 4*time.Second, 4
			}, nil},
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

		control := s
		control.client = "native"
		It("native passes "+c.breaks+" where "+c.client+" fails it", labels(control, "mutant-control", "quick"), func(ctx SpecContext) {
			_, r := run(ctx, control)
			chk := check(r, c.breaks)
			Expect(chk.Status).To(Equal(checker.Pass), chk.Summary)
		}, SpecTimeout(2*time.Minute))
	}
})
