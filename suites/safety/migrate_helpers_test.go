package safety_test

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/valkey-io/valkey-go"

	"github.com/lockcheck/lockcheck/topology"
)

// The migration specs read the servers below the lock clients: what one
// node holds and answers, and what it counted, so that where a lock call
// went and what it changed is shown by the servers, not assumed.

// migrationPair is the primary that owns key's slot and another primary
// to move the slot to.
func migrationPair(ctx context.Context, t *topology.Topology, key string) (from, to *topology.Node) {
	from, err := t.SlotOwner(ctx, topology.KeySlot(key))
	Expect(err).NotTo(HaveOccurred())
	shards, err := t.Shards(ctx)
	Expect(err).NotTo(HaveOccurred())
	for _, sh := range shards {
		if sh.Primary != from {
			return from, sh.Primary
		}
	}
	Fail(fmt.Sprintf("no primary other than %s to move slot %d to", from.Name, topology.KeySlot(key)))
	return nil, nil
}

// asking runs one command on n after ASKING on the same connection, as a
// client sent there by ASK does: a node importing the slot serves it.
func asking(ctx context.Context, n *topology.Node, args ...string) (string, error) {
	replies, err := pipeline(ctx, n, []string{"ASKING"}, args)
	if err != nil {
		return "", err
	}
	if replies[0] != "OK" {
		return "", fmt.Errorf("ASKING on %s answered %s", n.Name, replies[0])
	}
	return replies[1], nil
}

// pipeline sends cmds to n back to back on one connection and returns
// each reply as text, an error reply included (its exact words): a
// transaction's replies are what a spec asserts on, errors among them.
func pipeline(ctx context.Context, n *topology.Node, cmds ...[]string) ([]string, error) {
	c, err := n.Client()
	if err != nil {
		return nil, err
	}
	built := make([]valkey.Completed, 0, len(cmds))
	for _, cmd := range cmds {
		built = append(built, c.B().Arbitrary(cmd...).Build())
	}
	out := make([]string, len(cmds))
	for i, r := range c.DoMulti(ctx, built...) {
		text, err := topology.ReplyText(r)
		if _, isReply := err.(topology.ServerError); err != nil && !isReply {
			return nil, fmt.Errorf("%s on %s: %w", cmds[i][0], n.Name, err)
		}
		out[i] = text
		if err != nil {
			out[i] = err.Error()
		}
	}
	return out, nil
}

// keysIn is how many keys n holds in slot (CLUSTER COUNTKEYSINSLOT, which
// no migration redirects).
func keysIn(ctx context.Context, n *topology.Node, slot int) int {
	s, err := n.Do(ctx, "CLUSTER", "COUNTKEYSINSLOT", strconv.Itoa(slot))
	Expect(err).NotTo(HaveOccurred())
	count, err := strconv.Atoi(s)
	Expect(err).NotTo(HaveOccurred(), "COUNTKEYSINSLOT on %s answered %q", n.Name, s)
	return count
}

// redirects is how many ASK and MOVED replies n has sent since it
// started, from its error statistics (INFO errorstats).
func redirects(ctx context.Context, n *topology.Node) (ask, moved int) {
	info, err := n.Info(ctx, "errorstats")
	Expect(err).NotTo(HaveOccurred())
	return errorCount(info, "ASK"), errorCount(info, "MOVED")
}

// errorCount reads errorstat_NAME:count=N (none sent: no line).
func errorCount(info map[string]string, name string) int {
	v, found := info["errorstat_"+name]
	if !found {
		return 0
	}
	count, err := strconv.Atoi(strings.TrimPrefix(strings.Split(v, ",")[0], "count="))
	Expect(err).NotTo(HaveOccurred(), "errorstat_%s is %q", name, v)
	return count
}

// awaitPhase waits until the migration's source reports phase, failing
// at once if it ended instead.
func awaitPhase(ctx context.Context, m *topology.Migration, phase string, limit time.Duration) {
	EventuallyWithOffset(1, ctx, func(g Gomega) {
		st, err := m.Status(ctx)
		g.Expect(err).NotTo(HaveOccurred())
		if st.Done() {
			StopTrying(fmt.Sprintf("%s ended before %s: %s", m, phase, st)).Now()
		}
		g.Expect(st.Phase).To(Equal(phase), "%s", st)
	}).WithTimeout(limit).WithPolling(5 * time.Millisecond).Should(Succeed())
}

// crossSlotKeys are a lock key and a fence key without hash tags, in two
// slots the same primary owns (the first such pair of lock:crossN and
// fence:crossN), and that primary.
func crossSlotKeys(ctx context.Context, t *topology.Topology) (lock, fence string, owner *topology.Node) {
	for i := range 100 {
		lock, fence = fmt.Sprintf("lock:cross%d", i), fmt.Sprintf("fence:cross%d", i)
		if topology.KeySlot(lock) == topology.KeySlot(fence) {
			continue
		}
		a, err := t.SlotOwner(ctx, topology.KeySlot(lock))
		Expect(err).NotTo(HaveOccurred())
		b, err := t.SlotOwner(ctx, topology.KeySlot(fence))
		Expect(err).NotTo(HaveOccurred())
		if a == b {
			return lock, fence, a
		}
	}
	Fail("no lock:crossN and fence:crossN in two slots of one primary for N < 100")
	return "", "", nil
}
