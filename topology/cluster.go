package topology

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Slots is the number of hash slots in a cluster.
const Slots = 16384

// startCluster starts six nodes and joins them by hand, as valkey-cli
// --cluster create would, but with a fixed layout: n0..n2 own a third of
// the slots each and n3..n5 replicate them in order, so a test knows which
// replica stands behind which primary.
func (t *Topology) startCluster(ctx context.Context) error {
	var specs []nodeSpec
	for i := range 6 {
		specs = append(specs, nodeSpec{name: fmt.Sprintf("n%d", i), index: i, conf: serverConfig(Cluster, "", t.opts)})
	}
	if err := t.addNodes(ctx, specs); err != nil {
		return err
	}
	if err := t.waitPing(ctx, t.Nodes); err != nil {
		return err
	}
	ids := make([]string, len(t.Nodes))
	for i, n := range t.Nodes {
		id, err := n.Do(ctx, "CLUSTER", "MYID")
		if err != nil {
			return err
		}
		ids[i] = id
		// Distinct epochs settle slot ownership at once instead of after a
		// collision round.
		if _, err := n.Do(ctx, "CLUSTER", "SET-CONFIG-EPOCH", strconv.Itoa(i+1)); err != nil {
			return err
		}
	}
	for i, r := range SlotRanges(3) {
		if _, err := t.Nodes[i].Do(ctx, "CLUSTER", "ADDSLOTSRANGE", strconv.Itoa(r[0]), strconv.Itoa(r[1])); err != nil {
			return err
		}
	}
	for _, n := range t.Nodes[1:] {
		if _, err := t.Nodes[0].Do(ctx, "CLUSTER", "MEET", n.IP.String(), strconv.Itoa(ServerPort)); err != nil {
			return err
		}
	}
	if err := t.awaitKnown(ctx); err != nil {
		return err
	}
	for i, n := range t.Nodes[3:] {
		if _, err := n.Do(ctx, "CLUSTER", "REPLICATE", ids[i]); err != nil {
			return err
		}
	}
	return t.waitFor(ctx, "cluster_state:ok and replication links up", t.clusterHealthy)
}

// clusterHealthy holds when every node reports cluster_state:ok, sees half
// the servers as primaries and half as replicas (three and three as
// started; AddShard and RemoveShard change both), and every replica's
// link is up. A primary counts once it has slots or, with none, is not
// failed: a shard AddShard just added owns nothing yet.
func (t *Topology) clusterHealthy(ctx context.Context) error {
	for _, n := range t.Nodes {
		info, err := n.Do(ctx, "CLUSTER", "INFO")
		if err != nil {
			return err
		}
		if st := parseInfo(info)["cluster_state"]; st != "ok" {
			return fmt.Errorf("%s: cluster_state %s", n.Name, st)
		}
		s, err := n.Do(ctx, "CLUSTER", "NODES")
		if err != nil {
			return err
		}
		primaries, replicas, want := 0, 0, len(t.Servers())/2
		for _, cn := range parseClusterNodes(s) {
			switch {
			case cn.primary && !cn.failed:
				primaries++
			case !cn.primary:
				replicas++
			}
		}
		if primaries != want || replicas != want {
			return fmt.Errorf("%s sees %d primaries and %d replicas, want %d of each", n.Name, primaries, replicas, want)
		}
		role, err := n.Role(ctx)
		if err != nil {
			return err
		}
		if role == RoleReplica {
			r, _ := n.Info(ctx, "replication")
			if r["master_link_status"] != "up" {
				return fmt.Errorf("%s: master_link_status %q", n.Name, r["master_link_status"])
			}
		}
	}
	return nil
}

// SlotRanges splits the slots into n contiguous ranges as valkey-cli does.
func SlotRanges(n int) [][2]int {
	var out [][2]int
	per := float64(Slots) / float64(n)
	first := 0
	for i := range n {
		last := int(float64(i+1)*per+0.5) - 1
		if i == n-1 {
			last = Slots - 1
		}
		out = append(out, [2]int{first, last})
		first = last + 1
	}
	return out
}

// clusterNode is one line of CLUSTER NODES.
type clusterNode struct {
	id, addr string
	// of is a replica's primary's id.
	of      string
	primary bool
	failed  bool
	slots   int
	// ranges are the slots it owns, each first and last inclusive.
	ranges [][2]int
}

// nodeFlags reads a CLUSTER NODES line's flags, a list of words: a
// primary, and failed (a failure, "fail", or a suspected one, "fail?").
// "nofailover" (cluster-replica-no-failover, on every node that has it)
// is no failure.
func nodeFlags(field string) (primary, failed bool) {
	flags := strings.Split(field, ",")
	return slices.Contains(flags, "master"), slices.Contains(flags, "fail") || slices.Contains(flags, "fail?")
}

func parseClusterNodes(s string) []clusterNode {
	var out []clusterNode
	for _, line := range strings.Split(strings.TrimSpace(s), "\n") {
		f := strings.Fields(line)
		if len(f) < 8 {
			continue
		}
		addr := f[1]
		if i := strings.IndexAny(addr, "@,"); i >= 0 {
			addr = addr[:i]
		}
		primary, failed := nodeFlags(f[2])
		cn := clusterNode{id: f[0], addr: addr, primary: primary, failed: failed}
		if f[3] != "-" {
			cn.of = f[3]
		}
		for _, r := range f[8:] {
			if strings.HasPrefix(r, "[") {
				continue // a slot being migrated
			}
			lo, hi, found := strings.Cut(r, "-")
			a, _ := strconv.Atoi(lo)
			b := a
			if found {
				b, _ = strconv.Atoi(hi)
			}
			cn.slots += b - a + 1
			cn.ranges = append(cn.ranges, [2]int{a, b})
		}
		out = append(out, cn)
	}
	return out
}

// KeySlot is the cluster hash slot of a key, hash tags included.
func KeySlot(key string) int {
	if i := strings.IndexByte(key, '{'); i >= 0 {
		if j := strings.IndexByte(key[i+1:], '}'); j > 0 {
			key = key[i+1 : i+1+j]
		}
	}
	return int(crc16(key) % Slots)
}

// crc16 is CRC-16/XMODEM, the cluster's key hash.
func crc16(s string) uint16 {
	var crc uint16
	for i := 0; i < len(s); i++ {
		crc ^= uint16(s[i]) << 8
		for range 8 {
			if crc&0x8000 != 0 {
				crc = crc<<1 ^ 0x1021
			} else {
				crc <<= 1
			}
		}
	}
	return crc
}
