// Suite upgrade runs rolling upgrades (and a rollback) under a lock
// workload, through lockcheck upgrade's path (harness.Execute with
// Scenario.UpgradeTo), and holds what each step shows: which servers that
// can lead lack the client's lock commands, and where the rejected check
// finds refused releases.
//
// What the specs assert is decided by the plan and the servers, not by
// the machine's speed: the step table's servers and versions come from
// probing them; a refused release can only come from a primary that lacks
// DELIFEQ, and every window (the first, before any step, too) lasts until
// a release has returned in it (fault.RollingUpgrade waits for one, and
// says so when none came), so a release is refused in the first on any
// machine.
package upgrade_test

import (
	"context"
	"maps"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/lockcheck/lockcheck/checker"
	"github.com/lockcheck/lockcheck/harness"
	"github.com/lockcheck/lockcheck/reports"
	"github.com/lockcheck/lockcheck/scenarios"
	"github.com/lockcheck/lockcheck/scenarios/fault"
	"github.com/lockcheck/lockcheck/suites"
	"github.com/lockcheck/lockcheck/topology"
)

func TestUpgrade(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "upgrade")
}

var env = suites.Setup()

// upgrade runs a rolling upgrade and returns its outcome.
func upgrade(ctx context.Context, from, to string, kind topology.Kind, client string) *harness.Outcome {
	return upgradeWith(ctx, from, to, kind, client, false)
}

// upgradeWith is upgrade, with resharding (Scenario.Reshard) when asked.
func upgradeWith(ctx context.Context, from, to string, kind topology.Kind, client string, reshard bool) *harness.Outcome {
	for _, b := range []string{from, to} {
		if a := env.Available[b]; a.Image == "" {
			Skip("unavailable: " + a.Reason)
		}
	}
	// each step's state held 2 s, two leases of 1 s (a hold is 0.2-1 s)
	fault.UpgradeHold = 2 * time.Second
	s := scenarios.Scenario{ServerSettings: scenarios.ServerSettings{Server: from, UpgradeTo: to, Reshard: reshard, Topology: kind}, ClientSettings: scenarios.ClientSettings{Client: client}, TrafficSettings: scenarios.TrafficSettings{TTL: time.Second, Duration: 10 * time.Minute, Seed: 1}}
	out, err := harness.Execute(ctx, env.Engine, s, harness.Options{Out: suites.RunDir(), Log: GinkgoWriter})
	Expect(err).NotTo(HaveOccurred())
	AddReportEntry("verdict", string(out.Check.Verdict)+": "+out.Check.Summary)
	for _, st := range out.Result.Steps {
		AddReportEntry("step", st.Detail+" | "+st.Understood()+" | found "+found(st))
	}
	Expect(out.Result.Notes).To(BeEmpty(), "the upgrade went through every step")
	return out
}

func found(st reports.Step) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(st.Found)) {
		parts = append(parts, k+" "+strconv.Itoa(st.Found[k]))
	}
	return strings.Join(parts, ", ")
}

// versions are the servers' versions a step left.
func versions(st reports.Step) []string {
	var out []string
	for _, n := range st.Nodes {
		out = append(out, n.Version)
	}
	return out
}

var _ = Describe("rolling upgrade", Label("upgrade"), func() {
	It("valkey-8.1 to 9.1 on Sentinel, native: DELIFEQ is missing on a node that can lead until the old primary moves, and only those steps refuse releases",
		Label("valkey-8.1", "valkey-9.1", string(topology.Sentinel), "native"), func(ctx SpecContext) {
			out := upgrade(ctx, "valkey-8.1", "valkey-9.1", topology.Sentinel, "native")
			steps := out.Result.Steps
			// before, 2 replicas, failover, old primary, 3 sentinels, after
			Expect(steps).To(HaveLen(9))
			for i, st := range steps {
				lacks := i <= 3 // until the old primary (an 8.1 replica that can lead) moves
				Expect(st.Lacking != nil).To(Equal(lacks), "step %q: %v", st.Detail, st.Lacking)
				if !lacks {
					Expect(st.Found).NotTo(HaveKey(checker.Rejected), "step %q refused a release on 9.1", st.Detail)
				}
			}
			Expect(steps[0].Found).To(HaveKey(checker.Rejected), "a release on the 8.1 primary before any step")
			Expect(steps[0].Lacking).To(HaveLen(3))
			rej, _ := out.Check.Check(checker.Rejected)
			Expect(rej.Status).To(Equal(checker.Fail))
			for _, f := range rej.Findings {
				Expect(f.Summary).To(ContainSubstring("unknown command 'DELIFEQ'"))
				// the first window opens as the upgrade starts, a few
				// milliseconds into the run
				if f.End >= steps[0].Start {
					Expect(f.Faults).NotTo(BeEmpty(), "the finding names its step")
				}
			}
			Expect(versions(steps[len(steps)-1])).To(HaveEach(HavePrefix("9.1.")))
		}, SpecTimeout(8*time.Minute))

	It("valkey-8.1 to 9.1 on Sentinel, lua: every node has what the client needs at every step, and nothing is refused",
		Label("valkey-8.1", "valkey-9.1", string(topology.Sentinel), "lua"), func(ctx SpecContext) {
			out := upgrade(ctx, "valkey-8.1", "valkey-9.1", topology.Sentinel, "lua")
			Expect(out.Result.Steps).To(HaveLen(9))
			for _, st := range out.Result.Steps {
				Expect(st.Probed).To(BeTrue())
				Expect(st.Lacking).To(BeEmpty(), "step %q", st.Detail)
				Expect(st.Found).NotTo(HaveKey(checker.Rejected), "step %q", st.Detail)
			}
			rej, _ := out.Check.Check(checker.Rejected)
			Expect(rej.Status).To(Equal(checker.Pass))
		}, SpecTimeout(8*time.Minute))

	It("valkey-8.1 to 9.1 on a cluster completes shard by shard with CLUSTER FAILOVER",
		Label("valkey-8.1", "valkey-9.1", string(topology.Cluster), "native"), func(ctx SpecContext) {
			out := upgrade(ctx, "valkey-8.1", "valkey-9.1", topology.Cluster, "native")
			steps := out.Result.Steps
			// before, 3 x (replica, failover, old primary), after
			Expect(steps).To(HaveLen(11))
			Expect(versions(steps[0])).To(HaveEach(HavePrefix("8.1.")))
			last := steps[len(steps)-1]
			Expect(versions(last)).To(HaveEach(HavePrefix("9.1.")))
			Expect(last.Links).To(BeEmpty(), "every replica's link up at the end")
			Expect(last.Lacking).To(BeEmpty())
			for _, st := range steps {
				Expect(st.Detail).NotTo(ContainSubstring("failed"))
			}
		}, SpecTimeout(8*time.Minute))

	// lua: its scripts run on every build, so that nothing is refused
	// and lock-correct judges the moves alone (native's DELIFEQ is
	// refused by 8.1, the spec above)
	It("valkey-8.1 to 9.1 on a cluster with resharding empties each primary before it is replaced and gives its slots back, with no failover and no lock lost",
		Label("valkey-8.1", "valkey-9.1", string(topology.Cluster), "lua", "reshard"), func(ctx SpecContext) {
			out := upgradeWith(ctx, "valkey-8.1", "valkey-9.1", topology.Cluster, "lua", true)
			steps := out.Result.Steps
			// before, 3 x (empty, replica, emptied primary, slots back), after
			Expect(steps).To(HaveLen(14))
			for i, st := range steps {
				Expect(st.Detail).NotTo(ContainSubstring("failed"))
				Expect(st.Detail).NotTo(ContainSubstring("FAILOVER"))
				if i == 0 || i == len(steps)-1 {
					continue // before and after
				}
				switch (i - 1) % 4 {
				case 0:
					Expect(st.Detail).To(ContainSubstring("empty n"))
				case 3:
					Expect(st.Detail).To(ContainSubstring("its slots back"))
				}
			}
			last := steps[len(steps)-1]
			Expect(versions(last)).To(HaveEach(HavePrefix("9.1.")))
			Expect(last.Links).To(BeEmpty(), "every replica's link up at the end")
			// every move by the legacy method (8.1 has no atomic one) kept
			// the keys: no lock was lost or handed out twice
			Expect(checker.ExpectLockCorrect.Meets(out.Check, out.History.Meta.Fenced)).To(Succeed())
		}, SpecTimeout(8*time.Minute))

	It("valkey-9.1 back to 8.1 on Sentinel completes: no 8.1 server loads its 9.1 data, each starts empty and resynchronises",
		Label("valkey-9.1", "valkey-8.1", string(topology.Sentinel), "native", "rollback"), func(ctx SpecContext) {
			out := upgrade(ctx, "valkey-9.1", "valkey-8.1", topology.Sentinel, "native")
			steps := out.Result.Steps
			Expect(steps).To(HaveLen(9))
			moved := 0
			for _, st := range steps {
				if strings.HasPrefix(st.Detail, "step ") && strings.Contains(st.Detail, "on valkey-8.1") && !strings.Contains(st.Detail, "(sentinel)") {
					moved++
					Expect(st.Detail).To(ContainSubstring("Can't handle RDB format version"), "a 9.1 snapshot on 8.1")
					Expect(st.Detail).To(ContainSubstring("started again without its data"))
				}
			}
			Expect(moved).To(Equal(3), "three servers moved")
			last := steps[len(steps)-1]
			Expect(versions(last)).To(HaveEach(HavePrefix("8.1.")))
			Expect(last.Links).To(BeEmpty(), "every replica resynchronised")
			Expect(last.Lacking).To(HaveLen(3), "every 8.1 node lacks DELIFEQ")
		}, SpecTimeout(8*time.Minute))
})
