package topology_test

import (
	"context"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/lockcheck/lockcheck/suites"
	"github.com/lockcheck/lockcheck/topology"
)

// wantRoles is the healthy layout of each topology.
var wantRoles = map[topology.Kind]map[topology.Role]int{
	topology.Standalone: {topology.RolePrimary: 1},
	topology.Replicated: {topology.RolePrimary: 1, topology.RoleReplica: 2},
	topology.Sentinel:   {topology.RolePrimary: 1, topology.RoleReplica: 2, topology.RoleSentinel: 3},
	topology.Cluster:    {topology.RolePrimary: 3, topology.RoleReplica: 3},
}

// startsHealthy is the first spec of every build and kind's container
// (controls_test.go): the topology its BeforeAll started reports the
// build's version on every server, settles into the healthy layout, and a
// client that follows it reads its own write. The controls' specs then
// run on the same topology, so each build and kind starts once.
func startsHealthy(b topology.Build, kind topology.Kind, started func() *topology.Topology) {
	It("starts healthy and reports its version", Label(suites.Health), func(ctx SpecContext) {
		t := started()
		Expect(b.VersionMatches(t.Version)).To(BeTrue(), "reported %s", t.Version)
		if b.Debian != nil && env.Available[b.Name].Image != b.Official {
			Expect(t.Version).To(Equal(b.Debian.Upstream))
		}
		for _, n := range t.Nodes {
			v, err := n.Version(ctx)
			if !n.Sentinel {
				Expect(err).NotTo(HaveOccurred())
				Expect(v).To(Equal(t.Version), "node %s", n.Name)
			}
		}
		// The healthy layout, eventually: a node starved right after
		// start may trigger a spurious failover, after which the
		// layout settles again. Bounded, well inside the spec timeout.
		Eventually(func(ctx context.Context) (map[topology.Role]int, error) {
			roles := map[topology.Role]int{}
			for _, n := range t.Nodes {
				r, err := n.Role(ctx)
				if err != nil {
					return nil, err
				}
				roles[r]++
			}
			return roles, nil
		}).WithContext(ctx).WithTimeout(time.Minute).WithPolling(200 * time.Millisecond).Should(Equal(wantRoles[kind]))
		AddReportEntry("startup", t.Startup.String())
		for _, s := range t.Sentinels() {
			c, err := s.Client()
			Expect(err).NotTo(HaveOccurred())
			periods, err := c.Do(ctx, c.B().Arbitrary("SENTINEL", "DEBUG").Build()).AsStrMap()
			Expect(err).NotTo(HaveOccurred())
			Expect(periods).To(HaveKeyWithValue("INFO-PERIOD", "1000"), "sentinel %s's INFO period (topology.Options.InfoPeriod)", s.Name)
			Expect(periods).To(HaveKeyWithValue("PUBLISH-PERIOD", "500"), "sentinel %s's hello period (topology.Options.HelloPeriod)", s.Name)
			Expect(periods).To(HaveKeyWithValue("PING-PERIOD", "1000"), "sentinel %s's ping period (the server's own, restored after start)", s.Name)
		}

		// A client that follows the topology reads its own write.
		c, err := valkeyClient(t)
		Expect(err).NotTo(HaveOccurred())
		defer c.Close()
		Expect(c.Do(ctx, c.B().Set().Key("lock:{health}").Value("v").Build()).Error()).To(Succeed())
		Expect(c.Do(ctx, c.B().Get().Key("lock:{health}").Build()).ToString()).To(Equal("v"))
	}, SpecTimeout(2*time.Minute))
}
