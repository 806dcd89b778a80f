package topology_test

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/lockcheck/lockcheck/suites"
	"github.com/lockcheck/lockcheck/topology"
)

// A redlock topology is N primaries that know nothing of each other, and
// Crash keeps what a SIGKILL keeps (the AOF, whatever its fsync policy)
// but only what was synced through a power loss.
var _ = Describe("a redlock topology", Label(suites.KindLabel(topology.Redlock)), func() {
	It("starts five independent primaries", func(ctx SpecContext) {
		t := env.Start(ctx, "valkey-9.1", topology.Redlock, topology.Options{Nodes: 5})
		Expect(t.Servers()).To(HaveLen(5))
		Expect(t.Addrs()).To(HaveLen(5), "an adapter is given every node")
		for _, n := range t.Servers() {
			info, err := n.Info(ctx, "replication")
			Expect(err).NotTo(HaveOccurred())
			Expect(info["role"]).To(Equal("master"), n.Name)
			Expect(info["connected_slaves"]).To(Equal("0"), n.Name)
		}
		Expect(t.Healthy(ctx)).To(Succeed())
	}, SpecTimeout(2*time.Minute))

	for _, tc := range []struct {
		name      string
		fsync     topology.Fsync
		powerLoss bool
		keeps     bool
	}{
		{"a SIGKILL with fsync everysec keeps the key", topology.FsyncEverysec, false, true},
		{"a power loss with fsync everysec loses the key", topology.FsyncEverysec, true, false},
		{"a power loss with fsync always keeps the key", topology.FsyncAlways, true, true},
	} {
		It(tc.name, func(ctx SpecContext) {
			t := env.Start(ctx, "valkey-9.1", topology.Redlock, topology.Options{AOF: true, Fsync: tc.fsync})
			n := t.Servers()[0]
			_, err := n.Do(ctx, "SET", "k", "v", "PX", "60000")
			Expect(err).NotTo(HaveOccurred())
			Expect(n.Crash(ctx, 0, tc.powerLoss)).To(Succeed())
			Expect(n.Do(ctx, "EXISTS", "k")).To(Equal(map[bool]string{true: "1", false: "0"}[tc.keeps]))
			fsync, err := n.Do(ctx, "CONFIG", "GET", "appendfsync")
			Expect(err).NotTo(HaveOccurred())
			Expect(fsync).To(ContainSubstring(string(tc.fsync)))
		}, SpecTimeout(2*time.Minute))
	}
})
