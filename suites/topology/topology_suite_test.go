// Suite topology proves that every available server build starts healthy
// in every topology, reports its version, and that every node control does
// what it says on a real server.
package topology_test

import (
	"context"
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/lockcheck/lockcheck/suites"
	"github.com/lockcheck/lockcheck/topology"
)

func TestTopology(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "topology")
}

var env = suites.Setup()

// startTopology starts kind on build for the current spec or Ordered
// container; an unavailable build skips with its reason.
func startTopology(ctx context.Context, b topology.Build, kind topology.Kind) *topology.Topology {
	return env.Start(ctx, b.Name, kind, topology.Options{})
}
