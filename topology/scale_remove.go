package topology

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/moby/moby/client"
)

// forgetBan is how long CLUSTER FORGET keeps a forgotten id from coming
// back through gossip: every remaining server must have forgotten the
// removed nodes, and their containers be gone, within it.
const forgetBan = 60 * time.Second

// shardIDs are the cluster ids of the shard's nodes, or an error when one
// is not a server of this topology, any running server says one owns
// slots, or a server outside the shard follows one of them (it would lose
// its primary).
func (t *Topology) shardIDs(ctx context.Context, sh Shard) (map[*Node]string, error) {
	ids := map[*Node]string{}
	for _, n := range append([]*Node{sh.Primary}, sh.Replicas...) {
		if !slices.Contains(t.Servers(), n) {
			return nil, fmt.Errorf("%s is not a server of this topology", n.Name)
		}
		id, err := n.ClusterID(ctx)
		if err != nil {
			return nil, err
		}
		ids[n] = id
	}
	for _, n := range t.Servers() {
		if !n.Running(ctx) {
			continue
		}
		s, err := n.Do(ctx, "CLUSTER", "NODES")
		if err != nil {
			return nil, err
		}
		for _, cn := range parseClusterNodes(s) {
			member := t.byInternal(cn.addr)
			if _, in := ids[member]; in && cn.slots > 0 {
				return nil, fmt.Errorf("%s says %s owns %d slots %v: migrate them away first", n.Name, member.Name, cn.slots, cn.ranges)
			}
			if _, in := ids[member]; !in && cn.of != "" && slices.Contains(slices.Collect(maps.Values(ids)), cn.of) {
				return nil, fmt.Errorf("%s says %s follows a node of the shard", n.Name, cn.addr)
			}
		}
	}
	return ids, nil
}

// forget has every server of rest forget every node of gone, within the
// ban. Every server of rest must answer first: one that could not forget
// would keep the removed nodes as failed ones.
func (t *Topology) forget(ctx context.Context, gone map[*Node]string, rest []*Node) error {
	for _, n := range rest {
		if _, err := n.Do(ctx, "PING"); err != nil {
			return fmt.Errorf("every remaining server must forget the removed ones: %w", err)
		}
	}
	start := time.Now()
	for _, n := range rest {
		for g, id := range gone {
			_, err := n.Do(ctx, "CLUSTER", "FORGET", id)
			if err != nil && !strings.Contains(err.Error(), "Unknown node") {
				return fmt.Errorf("%s forgets %s: %w", n.Name, g.Name, err)
			}
		}
	}
	if d := time.Since(start); d > forgetBan/2 {
		return fmt.Errorf("forgetting took %s, too close to the %s ban for the removal to be sure", d.Round(time.Millisecond), forgetBan)
	}
	return nil
}

// dropNodes removes nodes' containers and takes them out of Nodes,
// keeping their logs for SaveLogs and closing their clients and links.
func (t *Topology) dropNodes(ctx context.Context, nodes []*Node) error {
	var errs []error
	for _, n := range nodes {
		if rc, err := n.c.Logs(ctx); err == nil {
			b, _ := io.ReadAll(rc)
			rc.Close()
			n.pastLogs = append(n.pastLogs, b...)
		}
		n.closeClient()
		t.links.forget(n)
		if _, err := t.eng.cli.ContainerRemove(ctx, n.ContainerID(), client.ContainerRemoveOptions{Force: true, RemoveVolumes: true}); err != nil && !isNotFound(err) {
			errs = append(errs, fmt.Errorf("remove %s: %w", n.Name, err))
		}
		t.Nodes = slices.DeleteFunc(t.Nodes, func(o *Node) bool { return o == n })
		t.removed = append(t.removed, n)
	}
	return errors.Join(errs...)
}
