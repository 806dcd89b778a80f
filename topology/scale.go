package topology

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"
)

// AddShard adds a primary and its replica to a running cluster, as Start
// lays out its own: containers named and addressed after the nodes so far
// (n6 and n7 after Start's six; a removed node's name and address are not
// reused), with the clock shim, the client links and the node options of
// their names, their logs saved by SaveLogs and removed by Terminate. The
// new primary is met from a member, and once every running server knows
// both, the replica follows the primary. The primary owns no slots:
// migrate some to it. On failure the new nodes are removed.
//
// The topology's Nodes change: a caller must not read them from another
// goroutine meanwhile.
func (t *Topology) AddShard(ctx context.Context) (sh Shard, err error) {
	if err := t.requireCluster("add a shard"); err != nil {
		return sh, err
	}
	next := t.nextIndex()
	specs := make([]nodeSpec, 2)
	for i := range specs {
		specs[i] = nodeSpec{name: fmt.Sprintf("n%d", next+i), index: next + i, conf: serverConfig(Cluster, "", t.opts)}
	}
	before := len(t.Nodes)
	err = t.addNodes(ctx, specs)
	added := slices.Clone(t.Nodes[before:])
	defer func() {
		if err != nil {
			// a fresh deadline: ctx may be what failed
			rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
			defer cancel()
			err = errors.Join(fmt.Errorf("add a shard: %w", err), t.dropNodes(rctx, added))
		}
	}()
	if err != nil {
		return sh, err
	}
	if err := t.waitPing(ctx, added); err != nil {
		return sh, err
	}
	sh = Shard{Primary: added[0], Replicas: added[1:]}
	if err := t.meet(ctx, added); err != nil {
		return sh, err
	}
	return sh, t.follow(ctx, sh.Primary, sh.Replicas[0])
}

// nextIndex is one past the highest node number given so far, removed
// nodes included: a new node's address must not be one the cluster may
// still remember.
func (t *Topology) nextIndex() int {
	next := 0
	for _, n := range append(slices.Clone(t.Nodes), t.removed...) {
		if i, err := strconv.Atoi(strings.TrimPrefix(n.Name, "n")); err == nil && i >= next {
			next = i + 1
		}
	}
	return next
}

// meet introduces the new nodes to the cluster from a member that answers,
// and waits until every running server knows every server.
func (t *Topology) meet(ctx context.Context, added []*Node) error {
	var member *Node
	for _, n := range t.Servers() {
		if !slices.Contains(added, n) && n.Running(ctx) {
			if _, err := n.Do(ctx, "PING"); err == nil {
				member = n
				break
			}
		}
	}
	if member == nil {
		return errors.New("no member of the cluster answers PING to meet the new nodes")
	}
	for _, n := range added {
		if _, err := member.Do(ctx, "CLUSTER", "MEET", n.IP.String(), strconv.Itoa(ServerPort)); err != nil {
			return err
		}
	}
	return t.awaitKnown(ctx)
}

// awaitKnown waits until every running server lists every server of the
// topology and no other, with no handshake in progress.
func (t *Topology) awaitKnown(ctx context.Context) error {
	servers := t.Servers()
	return t.waitFor(ctx, fmt.Sprintf("every node to know the %d servers", len(servers)), func(ctx context.Context) error {
		for _, n := range servers {
			if !n.Running(ctx) {
				continue
			}
			s, err := n.Do(ctx, "CLUSTER", "NODES")
			if err != nil {
				return err
			}
			if k := len(parseClusterNodes(s)); k != len(servers) || strings.Contains(s, "handshake") {
				return fmt.Errorf("%s knows %d nodes", n.Name, k)
			}
		}
		return nil
	})
}

// follow makes replica follow primary and waits until its link is up and
// every running server sees it as primary's replica.
func (t *Topology) follow(ctx context.Context, primary, replica *Node) error {
	id, err := primary.ClusterID(ctx)
	if err != nil {
		return err
	}
	if _, err := replica.Do(ctx, "CLUSTER", "REPLICATE", id); err != nil {
		return err
	}
	if err := t.waitFor(ctx, replica.Name+"'s link to "+primary.Name, func(ctx context.Context) error {
		return t.replicationUp(ctx, primary, []*Node{replica})
	}); err != nil {
		return err
	}
	return t.waitFor(ctx, "every node to see "+replica.Name+" follow "+primary.Name, func(ctx context.Context) error {
		for _, n := range t.Servers() {
			if !n.Running(ctx) {
				continue
			}
			s, err := n.Do(ctx, "CLUSTER", "NODES")
			if err != nil {
				return err
			}
			for _, cn := range parseClusterNodes(s) {
				if cn.addr == replica.Internal() && (cn.primary || cn.of != id) {
					return fmt.Errorf("%s does not see %s as %s's replica yet", n.Name, replica.Name, primary.Name)
				}
			}
		}
		return nil
	})
}

// RemoveShard removes the nodes of a shard, emptied of slots, from the
// cluster: every other server forgets them (CLUSTER FORGET, which bans
// their ids for 60 s, so the removed nodes' gossip cannot bring them back
// before they are gone), then their containers are removed, their logs
// kept for SaveLogs. The shard is the nodes named, whatever their roles
// now: a primary that gave its last slot away has turned into a replica
// of the primary that took it, and its replicas may have followed. It
// refuses when any server says a node of the shard owns slots, a server
// outside it follows one of its nodes, or a remaining server does not
// answer, since it could not forget them and would keep them as failed
// nodes.
//
// The topology's Nodes change: a caller must not read them from another
// goroutine meanwhile.
func (t *Topology) RemoveShard(ctx context.Context, sh Shard) error {
	what := "remove the shard of " + sh.Primary.Name
	if err := t.requireCluster(what); err != nil {
		return err
	}
	gone, err := t.shardIDs(ctx, sh)
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	var rest []*Node
	for _, n := range t.Servers() {
		if _, ok := gone[n]; !ok {
			rest = append(rest, n)
		}
	}
	if err := t.forget(ctx, gone, rest); err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	if err := t.dropNodes(ctx, slices.Collect(maps.Keys(gone))); err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	return t.awaitKnown(ctx)
}
