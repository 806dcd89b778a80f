// Suite topology proves that every available server build starts healthy
// in every topology, reports its version, and that every node control does
// what it says on a real server.
package topology_test

import (
	"context"
	"os"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/lockcheck/lockcheck/suites"
	"github.com/lockcheck/lockcheck/topology"
)

func TestTopology(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "topology")
}

var (
	eng       *topology.Engine
	available = map[string]suites.Available{}
)

var _ = BeforeSuite(func(ctx SpecContext) {
	var err error
	eng, err = topology.Connect(ctx, nil)
	Expect(err).NotTo(HaveOccurred(), "the suites need a Docker engine")
	for _, a := range suites.ObtainAll(ctx, eng, GinkgoWriter) {
		available[a.Build.Name] = a
		if a.Image == "" {
			AddReportEntry("unavailable "+a.Build.Name, a.Reason)
		}
	}
	DeferCleanup(func(ctx SpecContext) {
		// Whatever a failed spec left behind goes with the suite.
		Expect(eng.RemoveStarted(ctx)).To(Succeed())
		eng.Close()
	}, NodeTimeout(time.Minute))
}, NodeTimeout(20*time.Minute))

// startTopology starts kind on build for an Ordered container and removes
// it after the container's last spec; an unavailable build skips with its
// reason.
func startTopology(ctx context.Context, b topology.Build, kind topology.Kind) *topology.Topology {
	a := available[b.Name]
	if a.Image == "" {
		Skip("unavailable: " + a.Reason)
	}
	t, err := topology.Start(ctx, eng, b, a.Image, kind, topology.Options{})
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(func(ctx SpecContext) {
		Expect(t.Terminate(ctx)).To(Succeed())
	}, NodeTimeout(time.Minute))
	return t
}

func TestMain(m *testing.M) {
	topology.Defaults()
	os.Exit(m.Run())
}
