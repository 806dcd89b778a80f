package safety_test

import (
	"context"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/lockcheck/lockcheck/checker"
	"github.com/lockcheck/lockcheck/history"
	"github.com/lockcheck/lockcheck/scenarios"
	"github.com/lockcheck/lockcheck/scenarios/fault"
	"github.com/lockcheck/lockcheck/scenarios/lockclient"
	"github.com/lockcheck/lockcheck/topology"
)

// inject runs a fault by hand beside the script and waits until its window
// opened; the returned function waits for the fault to end and says how.
func inject(ctx context.Context, s *scenarios.Script, f fault.Fault, ttl time.Duration) (wait func() error) {
	errc := make(chan error, 1)
	fctx, cancel := context.WithCancel(ctx)
	DeferCleanup(cancel)
	go func() { errc <- f.Inject(fctx, s.FaultEnv(key, ttl)) }()
	Expect(s.AwaitFault(ctx, f.Name(), 30*time.Second)).To(Succeed(), "the %s window opened", f.Name())
	return func() error { return <-errc }
}

// slow-replication, scripted: while the primary's replication stalls,
// WAIT 1 after an acquire (on the acquire's own connection: the client's
// WaitOptions) answers 0 when its timeout runs out. A client
// that goes on (go-on) holds a lock its replicas never saw; one that gives
// the lock back (release) reports the acquire failed and leaves no key.
// Once the fault is over, WAIT is acknowledged again.
var _ = Describe("slow-replication, scripted", func() {
	It("makes WAIT 1 fall short until it is healed: go-on keeps a lock only the primary has, release gives it back", Label(newest, string(topology.Replicated), "native", "slow-replication", "quick"), func(ctx SpecContext) {
		s := script(ctx, topology.Replicated, topology.Options{}, []string{"native", "native"}, func(w int, c *lockclient.Config) {
			c.Wait = lockclient.WaitOptions{Replicas: 1, Timeout: 200 * time.Millisecond, OnShort: lockclient.WaitGoOn}
			if w == 1 {
				c.Wait.OnShort = lockclient.WaitRelease
			}
		})
		ttl := 30 * time.Second
		p, err := s.Topo.Primary(ctx, key)
		Expect(err).NotTo(HaveOccurred())
		var replicas []*topology.Node
		for _, n := range s.Topo.Servers() {
			if n != p {
				replicas = append(replicas, n)
			}
		}
		Expect(replicas).NotTo(BeEmpty())

		wait := inject(ctx, s, fault.SlowReplication, ttl)
		a := ok(s.Acquire(ctx, 0, key, ttl), "worker 0's acquire (go-on)")
		Expect(s.Counts(0)["short_waits"]).To(BeNumerically(">=", 1), "worker 0's WAIT fell short")
		for _, r := range replicas {
			Expect(r.Do(ctx, "GET", key)).To(Equal(topology.Nil), "%s has not seen the lock", r.Name)
		}
		other := scenarios.LockKey(1)
		b := s.Acquire(ctx, 1, other, ttl)
		Expect(b.Outcome).To(Equal(history.Fail), "worker 1 (release) reports its acquire failed: %s", b.Err)
		Expect(b.Err).To(ContainSubstring("acknowledged by 0 replicas"))
		Expect(p.Do(ctx, "EXISTS", other)).To(Equal("0"), "and gave the lock back")

		Expect(wait()).To(Succeed())
		// healed: worker 1 (release) keeps a lock only when a replica
		// acknowledged it
		var c scenarios.Step
		Eventually(func() history.Outcome {
			c = s.Acquire(ctx, 1, other, ttl)
			return c.Outcome
		}).WithContext(ctx).WithTimeout(30*time.Second).Should(Equal(history.OK), "healed: WAIT 1 is acknowledged again")
		AddReportEntry("worker 1's short waits", s.Counts(1)["short_waits"])
		for _, r := range replicas {
			Eventually(func() (string, error) { return r.Do(ctx, "GET", key) }).WithContext(ctx).
				Should(Equal(a.Token), "%s caught up with the lock", r.Name)
		}
		ok(s.Release(ctx, 1, other, c.Token), "worker 1's release")
		ok(s.Release(ctx, 0, key, a.Token), "worker 0's release")
		_, r := judge(ctx, s)
		Expect(r.Verdict).To(Equal(checker.Safe), r.Summary)
	}, SpecTimeout(2*time.Minute))
})

// partition-sentinels, scripted: the sentinels lose the primary while it
// still serves its clients; they promote a replica, and for a while two
// nodes call themselves primary and each takes the same lock. After the
// heal Sentinel turns the old primary into a replica of the new one.
var _ = Describe("partition-sentinels, scripted", func() {
	It("leaves two primaries that each grant the lock until the heal demotes the old one", Label(newest, string(topology.Sentinel), "native", "partition-sentinels"), func(ctx SpecContext) {
		s := script(ctx, topology.Sentinel, topology.Options{}, []string{"native"}, nil)
		ttl := 30 * time.Second
		old, err := s.Topo.Primary(ctx, key)
		Expect(err).NotTo(HaveOccurred())
		wait := inject(ctx, s, fault.PartitionSentinels, ttl)
		var promoted *topology.Node
		Eventually(func() bool {
			for _, n := range s.Topo.Servers() {
				if r, err := n.Role(ctx); n != old && err == nil && r == topology.RolePrimary {
					promoted = n
					return true
				}
			}
			return false
		}).WithContext(ctx).WithTimeout(30*time.Second).Should(BeTrue(), "the sentinels promote a replica")
		Expect(old.Role(ctx)).To(Equal(topology.RolePrimary), "the old primary, cut off from the sentinels only, still calls itself primary")
		Expect(old.Do(ctx, "SET", key, "on-the-old-primary", "NX", "PX", "30000")).To(Equal("OK"), "the old primary grants the lock to its clients")
		Expect(promoted.Do(ctx, "SET", key, "on-the-new-primary", "NX", "PX", "30000")).To(Equal("OK"), "and so does the new one: two holders")
		AddReportEntry("promoted", promoted.Name)
		Expect(wait()).To(Succeed())
		Eventually(func() (topology.Role, error) { return old.Role(ctx) }).WithContext(ctx).WithTimeout(60*time.Second).
			Should(Equal(topology.RoleReplica), "healed: Sentinel demotes the old primary")
	}, SpecTimeout(3*time.Minute))
})
