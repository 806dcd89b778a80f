package safety_test

import (
	"context"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/lockcheck/lockcheck/checker"
	"github.com/lockcheck/lockcheck/history"
	"github.com/lockcheck/lockcheck/scenarios"
	"github.com/lockcheck/lockcheck/topology"
)

// redlockTTL is the lease of the Redlock scripts: long next to a docker
// exec (a clock jump) or a restart on a loaded machine, so that nothing
// but the step under test can end it. Each node's call is bounded by a
// tenth of it (2 s), which the cut-off node's answer outlasts.
const redlockTTL = 20 * time.Second

// bareMajority has worker 0 take the lock while n1 is cut off from the
// clients (its link swallows every byte), so that it holds n0 and n2
// alone: the case the claims are about. The link then heals, and its
// connections are reset, being out of step.
func bareMajority(ctx context.Context, s *scenarios.Script) scenarios.Step {
	n1 := s.Topo.Node("n1")
	Expect(n1.BlackholeLinks()).To(Succeed())
	a := ok(s.Acquire(ctx, 0, key, redlockTTL), "worker 0's acquire on n0 and n2")
	Expect(n1.HealLinks()).To(Succeed())
	_, err := n1.ResetLinks()
	Expect(err).NotTo(HaveOccurred())
	for _, n := range []string{"n0", "n2"} {
		v, err := s.Topo.Node(n).Do(ctx, "GET", key)
		Expect(err).NotTo(HaveOccurred())
		Expect(v).To(Equal(a.Token), "worker 0's token on %s", n)
	}
	v, err := n1.Do(ctx, "EXISTS", key)
	Expect(err).NotTo(HaveOccurred())
	Expect(v).To(Equal("0"), "n1, cut off, never got the lock")
	return a
}

// redlockVerdict judges the script and asserts a double holder or none.
func redlockVerdict(ctx context.Context, s *scenarios.Script, double bool) {
	_, r := judge(ctx, s)
	dh := check(r, checker.DoubleHolder)
	if !double {
		Expect(dh.Status).To(Equal(checker.Pass), dh.Summary)
		Expect(r.Verdict).To(Equal(checker.Safe), r.Summary)
		return
	}
	Expect(dh.Status).To(Equal(checker.Fail), dh.Summary)
	Expect(r.Verdict).To(Equal(checker.Violated))
}

// One node's clock jump under a bare majority, scripted: worker 0 holds
// n0 and n2; n0's clock jumps forward by twice the TTL, so n0 lets the key
// go at once; worker 1 takes n0 and n1, a majority, while worker 0's lease
// has hardly begun. Without the jump, worker 1 finds n0 and n2 taken.
var _ = Describe("Redlock under one node's clock jump, scripted", func() {
	for _, jump := range []bool{true, false} {
		name := "without the jump, the second client is refused"
		if jump {
			name = "a minority's clock jump yields a double holder"
		}
		It(name, Label(newest, string(topology.Redlock), "redlock", "clock-jump-node", "quick"), func(ctx SpecContext) {
			s := script(ctx, topology.Redlock, topology.Options{}, []string{"redlock", "redlock"}, nil)
			a := bareMajority(ctx, s)
			n0 := s.Topo.Node("n0")
			window := -1
			if jump {
				window = s.Rec.FaultStart("clock-jump-node", "n0", "+2 TTL")
				Expect(n0.SetClockOffset(ctx, 2*redlockTTL)).To(Succeed())
				DeferCleanup(func(ctx SpecContext) { Expect(n0.SetClockOffset(ctx, 0)).To(Succeed()) })
				Expect(s.AwaitGone(ctx, key, 10*time.Second)).To(Succeed(), "n0 let the key go by its clock")
			}
			b := s.Acquire(ctx, 1, key, redlockTTL)
			if jump {
				s.Rec.FaultEnd(window)
			}
			if !jump {
				Expect(b.Outcome).To(Equal(history.Fail), "worker 1 finds n0 and n2 taken: %+v", b)
				redlockVerdict(ctx, s, false)
				return
			}
			ok(b, "worker 1's acquire on n0 and n1")
			Expect(b.Return).To(BeNumerically("<", a.Call+int64(redlockTTL)), "worker 0's lease still ran")
			redlockVerdict(ctx, s, true)
		}, SpecTimeout(3*time.Minute))
	}
})

// A power loss of one node of a bare majority, back at once, scripted:
// worker 0 holds n0 and n2; n0 is SIGKILLed and started again. Without AOF
// it comes back empty and worker 1 takes n0 and n1 while worker 0's lease
// runs; with appendfsync always it comes back with worker 0's key and
// worker 1 is refused.
var _ = Describe("Redlock through a node's crash and immediate restart, scripted", func() {
	for _, synced := range []bool{false, true} {
		name := "without fsync, the restarted node yields a double holder"
		opts := topology.Options{}
		if synced {
			name = "with appendfsync always, the second client is refused"
			opts = topology.Options{AOF: true, Fsync: topology.FsyncAlways}
		}
		It(name, Label(newest, string(topology.Redlock), "redlock", "crash-restart", "quick"), func(ctx SpecContext) {
			s := script(ctx, topology.Redlock, opts, []string{"redlock", "redlock"}, nil)
			a := bareMajority(ctx, s)
			n0 := s.Topo.Node("n0")
			w := s.Rec.FaultStart("crash-restart", "n0", "power loss, back at once")
			Expect(n0.Crash(ctx, 0, true)).To(Succeed())
			s.Rec.FaultEnd(w)
			v, err := n0.Do(ctx, "EXISTS", key)
			Expect(err).NotTo(HaveOccurred())
			// worker 1's client may find its connection to n0 broken by
			// the crash on its first try (an error reply, a refusal it
			// gives back): it tries for 2 s, well within worker 0's lease
			if synced {
				b := s.AcquireWithin(ctx, 1, key, redlockTTL, 2*time.Second)
				Expect(v).To(Equal("1"), "n0 kept worker 0's key")
				Expect(b.Outcome).To(Equal(history.Fail), "worker 1 finds n0 and n2 taken for 2 s: %+v", b)
				redlockVerdict(ctx, s, false)
				return
			}
			Expect(v).To(Equal("0"), "n0 lost worker 0's key")
			b := s.AcquireWithin(ctx, 1, key, redlockTTL, 2*time.Second)
			ok(b, "worker 1's acquire on n0 and n1")
			Expect(b.Return).To(BeNumerically("<", a.Call+int64(redlockTTL)), "worker 0's lease still ran")
			redlockVerdict(ctx, s, true)
		}, SpecTimeout(3*time.Minute))
	}
})
