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

// Every build in every topology starts once, in an Ordered container:
// its first spec holds that it started healthy (health_test.go), the
// others prove the node controls that topology exercises on it.
//
// Every wait for an effect that must come (PONG after resume, a key gone,
// a healed replica caught up) polls until the spec's own timeout: waiting
// longer weakens nothing, and a loaded machine is not read as a broken
// control.
var _ = Describe("every build in every topology", func() {
	for _, b := range topology.Builds() {
		for _, kind := range topology.Kinds() {
			Context(fmt.Sprintf("%s %s", b.Name, kind), Ordered, Label(suites.BuildLabel(b), suites.KindLabel(kind)), func() {
				var t *topology.Topology
				BeforeAll(func(ctx SpecContext) { t = startTopology(ctx, b, kind) }, NodeTimeout(2*time.Minute))
				started := func() *topology.Topology { return t }
				startsHealthy(b, kind, started)
				switch kind {
				case topology.Standalone:
					standaloneControls(started)
				case topology.Replicated:
					partitionControls(started)
				case topology.Sentinel, topology.Cluster:
					failoverControls(started)
				}
			})
		}
	}
})

// standaloneControls pauses, moves the clock of, restarts and kills the
// one node.
func standaloneControls(started func() *topology.Topology) {
	It("pauses: PING times out, then answers after resume", Label(suites.Pause), func(ctx SpecContext) {
		n := started().Nodes[0]
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
			WithContext(ctx).Should(Equal("PONG"))
	}, SpecTimeout(time.Minute))

	It("moves the wall clock: TIME jumps and a TTL expires early", Label(suites.Clock), func(ctx SpecContext) {
		n := started().Nodes[0]
		_, err := n.Do(ctx, "SET", "lock:{clock}", "t", "PX", "30000")
		Expect(err).NotTo(HaveOccurred())
		Expect(n.SetClockOffset(ctx, time.Minute)).To(Succeed())
		DeferCleanup(func(ctx SpecContext) { n.SetClockOffset(ctx, 0) })
		// The offset is measured at the moment of reading, against the
		// host's clock read around TIME: how long the docker execs and
		// the reads take does not enter it.
		after, within1 := clockOffset(ctx, n)
		Expect(after).To(BeNumerically("~", time.Minute, within1), "server clock minus host clock, after moving it by 1 min")
		Eventually(func(ctx context.Context) (string, error) { return n.Do(ctx, "PTTL", "lock:{clock}") }).
			WithContext(ctx).Should(Equal("-2"))
		Expect(n.SetClockOffset(ctx, 0)).To(Succeed())
		back, within := clockOffset(ctx, n)
		Expect(back).To(BeNumerically("~", 0, within), "server clock minus host clock, after moving it back")
		AddReportEntry("clock offset", fmt.Sprintf("moved: %s ± %s; back: %s ± %s", after, within1, back, within))
	}, SpecTimeout(time.Minute))

	It("restarts keeping or dropping its data", Label(suites.Restart), func(ctx SpecContext) {
		n := started().Nodes[0]
		_, err := n.Do(ctx, "SET", "kept", "1")
		Expect(err).NotTo(HaveOccurred())
		Expect(n.Restart(ctx, true)).To(Succeed())
		Expect(n.Do(ctx, "GET", "kept")).To(Equal("1"))
		Expect(n.Restart(ctx, false)).To(Succeed())
		Expect(n.Do(ctx, "EXISTS", "kept")).To(Equal("0"))
	}, SpecTimeout(time.Minute))

	It("kills: the server stops answering and its container stops", Label(suites.Kill), func(ctx SpecContext) {
		n := started().Nodes[0]
		Expect(n.Kill(ctx)).To(Succeed())
		Eventually(func(ctx context.Context) bool { return n.Running(ctx) }).WithContext(ctx).Should(BeFalse())
		pctx, cancel := context.WithTimeout(ctx, time.Second)
		_, err := n.Do(pctx, "PING")
		cancel()
		Expect(err).To(HaveOccurred())
		Expect(n.Restart(ctx, false)).To(Succeed())
		Expect(n.Do(ctx, "PING")).To(Equal("PONG"))
	}, SpecTimeout(time.Minute))
}

// partitionControls cuts a replica from its peers, then from clients.
func partitionControls(started func() *topology.Topology) {
	It("partitions a node from its peers, then from clients, then heals", Label(suites.Partition), func(ctx SpecContext) {
		t := started()
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
			WithContext(ctx).Should(Equal("1"))
	}, SpecTimeout(2*time.Minute))
}

// failoverControls kills the primary of a topology that fails over.
func failoverControls(started func() *topology.Topology) {
	// Each wait below is for an event that will happen (a
	// promotion, a write through the new primary, the restarted
	// node rejoining as a replica, which takes a docker restart
	// plus Sentinel's INFO period): none has its own timeout, so
	// each polls until the spec's context ends, and a loaded
	// machine only makes the spec slower, never red.
	It("kills the primary: a replica is promoted and a client that follows the topology writes again", Label(suites.Kill), func(ctx SpecContext) {
		t := started()
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
		}).WithContext(ctx).WithPolling(100 * time.Millisecond).ShouldNot(Equal(old.Name))
		// The node's cached connection may still see the promotion's
		// reconnect (EOF): only its settled role counts.
		Eventually(func(ctx context.Context) (topology.Role, error) { return promoted.Role(ctx) }).
			WithContext(ctx).Should(Equal(topology.RolePrimary))
		Eventually(func(ctx context.Context) error {
			return c.Do(ctx, c.B().Set().Key(key).Value("after").Build()).Error()
		}).WithContext(ctx).WithPolling(100 * time.Millisecond).Should(Succeed())
		AddReportEntry("failover", time.Since(killed).String())
		Expect(c.Do(ctx, c.B().Get().Key(key).Build()).ToString()).To(Equal("after"))

		// The killed node comes back empty and rejoins as a replica.
		Expect(old.Restart(ctx, false)).To(Succeed())
		restarted := time.Now()
		Eventually(func(ctx context.Context) (topology.Role, error) { return old.Role(ctx) }).
			WithContext(ctx).Should(Equal(topology.RoleReplica))
		AddReportEntry("rejoined", time.Since(restarted).String())
	}, SpecTimeout(failoverSpecTimeout))
}

// failoverSpecTimeout bounds the kill-the-primary specs, whose waits poll
// until it ends: failure detection, promotion, the client following it, a
// docker restart and Sentinel's INFO period, with room for a loaded machine.
const failoverSpecTimeout = 5 * time.Minute

// clockSlack covers what the round trip does not: TIME's microsecond
// resolution and the shim's arithmetic.
const clockSlack = 10 * time.Millisecond

// clockOffset is a node's wall clock minus the host's, read at one moment:
// the server reads its clock between the host reads before and after TIME,
// so the true offset lies within that round trip of server − before. within
// is that round trip plus clockSlack.
func clockOffset(ctx context.Context, n *topology.Node) (offset, within time.Duration) {
	c, err := n.Client()
	Expect(err).NotTo(HaveOccurred())
	before := time.Now()
	parts, err := c.Do(ctx, c.B().Time().Build()).AsStrSlice()
	after := time.Now()
	Expect(err).NotTo(HaveOccurred())
	Expect(parts).To(HaveLen(2))
	sec, err := strconv.ParseInt(parts[0], 10, 64)
	Expect(err).NotTo(HaveOccurred())
	usec, err := strconv.ParseInt(parts[1], 10, 64)
	Expect(err).NotTo(HaveOccurred())
	server := time.Unix(sec, usec*int64(time.Microsecond))
	// Wall-clock readings (Round(0) drops the monotonic reading).
	return server.Sub(before.Round(0)), after.Sub(before) + clockSlack
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
