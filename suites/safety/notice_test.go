package safety_test

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/lockcheck/lockcheck/history"
	"github.com/lockcheck/lockcheck/topology"
)

// Time to notice against a real server, scripted: worker 0's lease runs
// out on the server while it sleeps past it, worker 1 takes the key, and
// worker 0's extend then returns nil. The figure is what the checker's
// definition says, from the history alone: from worker 0's lease end (its
// acquire's call + TTL) to its extend's return.
var _ = Describe("time to notice, scripted", func() {
	It("runs from a slept-through lease's end to the nil extend that tells its holder", Label(newest, string(topology.Standalone), "native", "time-to-notice", "quick"), func(ctx SpecContext) {
		s := sharedScript(ctx, topology.Options{}, []string{"native", "native"}, nil)
		ttl := time.Second
		a := ok(s.Acquire(ctx, 0, key, ttl), "worker 0's acquire")
		Expect(s.AwaitGone(ctx, key, 10*time.Second)).To(Succeed())
		b := ok(s.Acquire(ctx, 1, key, 10*time.Second), "worker 1's acquire once worker 0's lease is gone")
		leaseEnd := a.Call + ttl.Nanoseconds()
		s.SleepPast(ctx, leaseEnd, 300*time.Millisecond)
		e := s.Extend(ctx, 0, key, a.Token, ttl)
		Expect(e.Outcome).To(Equal(history.Fail), "worker 0's extend of a key worker 1 holds: %+v", e)
		Expect(e.Err).To(BeEmpty(), "a nil reply, not an error")
		s.Release(ctx, 1, key, b.Token)

		_, r := judge(ctx, s)
		n := r.TimeToNotice
		Expect(n).NotTo(BeNil())
		Expect(n.Losses).To(Equal(1), n.String())
		Expect(n.Told).To(Equal(1), n.String())
		want := float64(e.Return-leaseEnd) / 1e6
		Expect(n.MedianMs).To(BeNumerically("~", want, 0.001), n.String())
		Expect(n.WorstMs).To(BeNumerically("~", want, 0.001), n.String())
		Expect(n.MedianMs).To(BeNumerically(">=", 300), "slept 300 ms past the lease end before the extend")
	}, SpecTimeout(time.Minute))
})
