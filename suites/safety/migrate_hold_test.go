package safety_test

import (
	"context"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/lockcheck/lockcheck/topology"
)

// Holding Valkey's atomic slot migration at its hand-over. The source
// pauses writes once the target has caught up, grants the target the
// slots, and stays paused until the target announces it owns them (or
// its pause runs out). The target takes the slots at once unless its
// test hook DEBUG SLOTMIGRATION PREVENT-FAILOVER is set, which Valkey's
// own tests set to hold exactly this state; cleared, the target takes
// them at its next cluster tick.

// holdHandOver sets the hook on the migration's target and returns the
// function that clears it; the hook is cleared when the spec ends
// whatever happened.
func holdHandOver(ctx context.Context, target *topology.Node) (release func()) {
	hook := func(ctx context.Context, on string) {
		Expect(target.Do(ctx, "DEBUG", "SLOTMIGRATION", "PREVENT-FAILOVER", on)).To(Equal("OK"), "PREVENT-FAILOVER %s on %s", on, target.Name)
	}
	hook(ctx, "1")
	DeferCleanup(func(ctx SpecContext) { hook(ctx, "0") }, NodeTimeout(time.Minute))
	return func() { hook(ctx, "0") }
}

// setConfig sets a server parameter on n for the spec and puts its value
// back when the spec ends.
func setConfig(ctx context.Context, n *topology.Node, name, value string) {
	c, err := n.Client()
	Expect(err).NotTo(HaveOccurred())
	was, err := c.Do(ctx, c.B().Arbitrary("CONFIG", "GET", name).Build()).AsStrSlice()
	Expect(err).NotTo(HaveOccurred())
	Expect(was).To(HaveLen(2), "CONFIG GET %s on %s", name, n.Name)
	Expect(n.Do(ctx, "CONFIG", "SET", name, value)).To(Equal("OK"))
	DeferCleanup(func(ctx SpecContext) {
		Expect(n.Do(ctx, "CONFIG", "SET", name, was[1])).To(Equal("OK"))
	}, NodeTimeout(time.Minute))
}

// cancelUnlessDone cancels a migration a failed spec left running, so
// that the source stops its pause and the next spec finds the slot owned.
func cancelUnlessDone(ctx SpecContext, m *topology.Migration) {
	if st, err := m.Status(ctx); err == nil && !st.Done() {
		Expect(m.Cancel(ctx)).To(Succeed())
	}
}

// expectHeldAtHandOver asserts that m stands where holdHandOver holds
// it: the source has granted the hand-over and paused writes for it
// (INFO's paused_reason and paused_actions), and the target has been
// granted the slots but not taken them.
func expectHeldAtHandOver(ctx context.Context, m *topology.Migration) {
	src, err := m.Status(ctx)
	Expect(err).NotTo(HaveOccurred())
	ExpectWithOffset(1, src.Phase).To(Equal("failover-granted"), "the source's export: %s", src)
	dst, err := m.TargetStatus(ctx)
	Expect(err).NotTo(HaveOccurred())
	ExpectWithOffset(1, dst.Phase).To(Equal("failover-granted"), "the target's import: %s", dst)
	info, err := m.From.Info(ctx, "clients")
	Expect(err).NotTo(HaveOccurred())
	ExpectWithOffset(1, info["paused_reason"]).To(Equal("slot_migration_in_progress"), "%s's pause", m.From.Name)
	ExpectWithOffset(1, info["paused_actions"]).To(Equal("write"), "%s's pause", m.From.Name)
}

// awaitPostponed waits until n lists a client it holds back on cmd
// (CLIENT LIST: the command, and b among the flags): a write that reached
// n during its write pause and waits there for its end.
func awaitPostponed(ctx context.Context, n *topology.Node, cmd string, limit time.Duration) {
	EventuallyWithOffset(1, ctx, func(g Gomega) {
		list, err := n.Do(ctx, "CLIENT", "LIST")
		g.Expect(err).NotTo(HaveOccurred())
		held := 0
		for _, line := range strings.Split(list, "\n") {
			f := clientFields(line)
			if f["cmd"] == cmd && strings.Contains(f["flags"], "b") {
				held++
			}
		}
		g.Expect(held).To(Equal(1), "clients %s holds on %s:\n%s", n.Name, cmd, list)
	}).WithTimeout(limit).WithPolling(5 * time.Millisecond).Should(Succeed())
}

// clientFields splits one CLIENT LIST line into its name=value fields.
func clientFields(line string) map[string]string {
	f := map[string]string{}
	for _, kv := range strings.Fields(line) {
		if k, v, found := strings.Cut(kv, "="); found {
			f[k] = v
		}
	}
	return f
}
