package topology_test

import (
	"context"
	"fmt"
	"strconv"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/lockcheck/lockcheck/suites"
	"github.com/lockcheck/lockcheck/topology"
)

var _ = Describe("node controls", func() {
	for _, b := range topology.Builds() {
		Context(b.Name+" standalone", Ordered, Label(suites.BuildLabel(b), suites.KindLabel(topology.Standalone)), func() {
			var t *topology.Topology
			var n *topology.Node
			BeforeAll(func(ctx SpecContext) {
				t = startTopology(ctx, b, topology.Standalone)
				n = t.Nodes[0]
			}, NodeTimeout(2*time.Minute))

			It("pauses: PING times out, then answers after resume", Label(suites.Pause), func(ctx SpecContext) {
				Expect(n.Pause(ctx)).To(Succeed())
				resumed := false
				DeferCleanup(func(ctx SpecContext) {
					if !resumed {
						n.Resume(ctx)
					}
				})
				pctx, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
				_, err := n.Do(pctx, "PING")
				cancel()
				Expect(err).To(HaveOccurred(), "a paused server must not answer")
				Expect(n.Resume(ctx)).To(Succeed())
				resumed = true
				Eventually(func(ctx context.Context) (string, error) { return n.Do(ctx, "PING") }).
					WithContext(ctx).WithTimeout(5 * time.Second).Should(Equal("PONG"))
			}, SpecTimeout(30*time.Second))

			It("moves the wall clock: TIME jumps and a TTL expires early", Label(suites.Clock), func(ctx SpecContext) {
				before := serverTime(ctx, n)
				_, err := n.Do(ctx, "SET", "lock:{clock}", "t", "PX", "30000")
				Expect(err).NotTo(HaveOccurred())
				Expect(n.SetClockOffset(ctx, time.Minute)).To(Succeed())
				DeferCleanup(func(ctx SpecContext) { n.SetClockOffset(ctx, 0) })
				after := serverTime(ctx, n)
				Expect(after - before).To(BeNumerically("~", time.Minute, 5*time.Second))
				Eventually(func(ctx context.Context) (string, error) { return n.Do(ctx, "PTTL", "lock:{clock}") }).
					WithContext(ctx).WithTimeout(3 * time.Second).Should(Equal("-2"))
				Expect(n.SetClockOffset(ctx, 0)).To(Succeed())
				back := serverTime(ctx, n)
				Expect(back - before).To(BeNumerically("<", 5*time.Second))
			}, SpecTimeout(30*time.Second))

			It("restarts keeping or dropping its data", Label(suites.Restart), func(ctx SpecContext) {
				_, err := n.Do(ctx, "SET", "kept", "1")
				Expect(err).NotTo(HaveOccurred())
				Expect(n.Restart(ctx, true)).To(Succeed())
				Expect(n.Do(ctx, "GET", "kept")).To(Equal("1"))
				Expect(n.Restart(ctx, false)).To(Succeed())
				Expect(n.Do(ctx, "EXISTS", "kept")).To(Equal("0"))
			}, SpecTimeout(time.Minute))

			It("kills: the server stops answering and its container stops", Label(suites.Kill), func(ctx SpecContext) {
				Expect(n.Kill(ctx)).To(Succeed())
				Eventually(func(ctx context.Context) bool { return n.Running(ctx) }).WithContext(ctx).WithTimeout(10 * time.Second).Should(BeFalse())
				pctx, cancel := context.WithTimeout(ctx, time.Second)
				_, err := n.Do(pctx, "PING")
				cancel()
				Expect(err).To(HaveOccurred())
				Expect(n.Restart(ctx, false)).To(Succeed())
				Expect(n.Do(ctx, "PING")).To(Equal("PONG"))
			}, SpecTimeout(time.Minute))
		})

		Context(b.Name+" replicated", Ordered, Label(suites.BuildLabel(b), suites.KindLabel(topology.Replicated), suites.Partition), func() {
			var t *topology.Topology
			BeforeAll(func(ctx SpecContext) { t = startTopology(ctx, b, topology.Replicated) }, NodeTimeout(2*time.Minute))

			It("partitions a node from its peers, then from clients, then heals", func(ctx SpecContext) {
				primary, replica := t.Nodes[0], t.Nodes[1]
				Expect(peerPing(ctx, primary, replica)).To(Succeed())

				Expect(replica.Partition(ctx, topology.FromPeers)).To(Succeed())
				DeferCleanup(func(ctx SpecContext) { replica.Heal(ctx) })
				Expect(peerPing(ctx, primary, replica)).NotTo(Succeed(), "peers must not reach a node cut off from them")
				Expect(replica.Do(ctx, "PING")).To(Equal("PONG"), "clients still reach it")
				// Writes on the primary no longer reach the cut-off replica.
				_, err := primary.Do(ctx, "SET", "cut", "1")
				Expect(err).NotTo(HaveOccurred())
				Consistently(func(ctx context.Context) (string, error) { return replica.Do(ctx, "EXISTS", "cut") }).
					WithContext(ctx).WithTimeout(time.Second).Should(Equal("0"))

				Expect(replica.Heal(ctx)).To(Succeed())
				Expect(peerPing(ctx, primary, replica)).To(Succeed())

				Expect(replica.Partition(ctx, topology.FromClients)).To(Succeed())
				pctx, cancel := context.WithTimeout(ctx, time.Second)
				_, err = replica.Do(pctx, "PING")
				cancel()
				Expect(err).To(HaveOccurred(), "clients must not reach a node cut off from them")
				Expect(peerPing(ctx, primary, replica)).To(Succeed(), "peers still reach it")

				Expect(replica.Heal(ctx)).To(Succeed())
				Eventually(func(ctx context.Context) (string, error) { return replica.Do(ctx, "GET", "cut") }).
					WithContext(ctx).WithTimeout(20 * time.Second).Should(Equal("1"))
			}, SpecTimeout(time.Minute))
		})

		for _, kind := range []topology.Kind{topology.Sentinel, topology.Cluster} {
			Context(fmt.Sprintf("%s %s", b.Name, kind), Ordered, Label(suites.BuildLabel(b), suites.KindLabel(kind), suites.Kill), func() {
				var t *topology.Topology
				BeforeAll(func(ctx SpecContext) { t = startTopology(ctx, b, kind) }, NodeTimeout(2*time.Minute))

				It("kills the primary: a replica is promoted and a client that follows the topology writes again", func(ctx SpecContext) {
					key := "lock:{failover}"
					c, err := valkeyClient(t)
					Expect(err).NotTo(HaveOccurred())
					defer c.Close()
					Expect(c.Do(ctx, c.B().Set().Key(key).Value("before").Build()).Error()).To(Succeed())

					old, err := t.Primary(ctx, key)
					Expect(err).NotTo(HaveOccurred())
					Expect(old.Kill(ctx)).To(Succeed())
					killed := time.Now()

					var promoted *topology.Node
					Eventually(func(ctx context.Context) (string, error) {
						p, err := t.Primary(ctx, key)
						if err != nil {
							return "", err
						}
						promoted = p
						return p.Name, nil
					}).WithContext(ctx).WithTimeout(30 * time.Second).WithPolling(100 * time.Millisecond).ShouldNot(Equal(old.Name))
					Expect(promoted.Role(ctx)).To(Equal(topology.RolePrimary))
					Eventually(func(ctx context.Context) error {
						return c.Do(ctx, c.B().Set().Key(key).Value("after").Build()).Error()
					}).WithContext(ctx).WithTimeout(30 * time.Second).WithPolling(100 * time.Millisecond).Should(Succeed())
					AddReportEntry("failover", time.Since(killed).String())
					Expect(c.Do(ctx, c.B().Get().Key(key).Build()).ToString()).To(Equal("after"))

					// The killed node comes back empty and rejoins as a replica.
					Expect(old.Restart(ctx, false)).To(Succeed())
					Eventually(func(ctx context.Context) (topology.Role, error) { return old.Role(ctx) }).
						WithContext(ctx).WithTimeout(30 * time.Second).Should(Equal(topology.RoleReplica))
				}, SpecTimeout(2*time.Minute))
			})
		}
	}
})

// serverTime reads TIME from a node.
func serverTime(ctx context.Context, n *topology.Node) time.Duration {
	c, err := n.Client()
	Expect(err).NotTo(HaveOccurred())
	parts, err := c.Do(ctx, c.B().Time().Build()).AsStrSlice()
	Expect(err).NotTo(HaveOccurred())
	sec, _ := strconv.ParseInt(parts[0], 10, 64)
	usec, _ := strconv.ParseInt(parts[1], 10, 64)
	return time.Duration(sec)*time.Second + time.Duration(usec)*time.Microsecond
}

// peerPing pings to from inside from's container, over the topology's own
// network, as replication and the cluster bus would travel.
func peerPing(ctx context.Context, from, to *topology.Node) error {
	out, err := from.Exec(ctx, "timeout", "2", string(from.Family())+"-cli", "-h", to.IP.String(), "-p", strconv.Itoa(to.Port), "PING")
	if err != nil {
		return err
	}
	if out != "PONG" {
		return fmt.Errorf("peer ping answered %q", out)
	}
	return nil
}
