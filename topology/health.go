package topology

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"
)

// Shard is a primary and the replicas that follow it.
type Shard struct {
	Primary  *Node
	Replicas []*Node
}

// Shards are the topology's primaries and their replicas as the servers
// say now: one shard for replicated and Sentinel (the server whose role
// is primary, wherever a failover moved it), three for a cluster (from
// CLUSTER NODES), the server itself for standalone.
func (t *Topology) Shards(ctx context.Context) ([]Shard, error) {
	servers := t.Servers()
	switch t.Kind {
	case Standalone:
		return []Shard{{Primary: servers[0]}}, nil
	case Redlock:
		out := make([]Shard, len(servers))
		for i, n := range servers {
			out[i] = Shard{Primary: n}
		}
		return out, nil
	case Cluster:
		return t.clusterShards(ctx)
	}
	var sh Shard
	for _, n := range servers {
		r, err := n.Role(ctx)
		if err != nil {
			return nil, fmt.Errorf("role of %s: %w", n.Name, err)
		}
		if r == RolePrimary {
			if sh.Primary != nil {
				return nil, fmt.Errorf("two servers call themselves primary: %s and %s", sh.Primary.Name, n.Name)
			}
			sh.Primary = n
		} else {
			sh.Replicas = append(sh.Replicas, n)
		}
	}
	if sh.Primary == nil {
		return nil, errors.New("no server calls itself primary")
	}
	return []Shard{sh}, nil
}

func (t *Topology) clusterShards(ctx context.Context) ([]Shard, error) {
	var (
		nodes []clusterNode
		err   error
	)
	for _, n := range t.Servers() {
		var s string
		if s, err = n.Do(ctx, "CLUSTER", "NODES"); err == nil {
			nodes = parseClusterNodes(s)
			break
		}
	}
	if nodes == nil {
		return nil, fmt.Errorf("CLUSTER NODES: %w", err)
	}
	byID := map[string]*Shard{}
	var out []*Shard
	for _, cn := range nodes {
		if cn.primary && cn.slots > 0 {
			n := t.byInternal(cn.addr)
			if n == nil {
				return nil, fmt.Errorf("CLUSTER NODES names %s, which is not a node of this topology", cn.addr)
			}
			sh := &Shard{Primary: n}
			byID[cn.id] = sh
			out = append(out, sh)
		}
	}
	for _, cn := range nodes {
		if sh := byID[cn.of]; sh != nil && !cn.primary {
			if n := t.byInternal(cn.addr); n != nil {
				sh.Replicas = append(sh.Replicas, n)
			}
		}
	}
	res := make([]Shard, 0, len(out))
	for _, sh := range out {
		res = append(res, *sh)
	}
	slices.SortFunc(res, func(a, b Shard) int { return a.Primary.IP.Compare(b.Primary.IP) })
	return res, nil
}

// Healthy checks once that the topology serves as Start left it, the
// primary wherever a failover moved it: every replica's link is up and
// its primary counts it; with Sentinel, every sentinel names the primary
// and knows the replicas and the other sentinels; a cluster's state is
// ok with half its servers primaries and half replicas (three and three
// unless AddShard or RemoveShard changed them).
func (t *Topology) Healthy(ctx context.Context) error {
	switch t.Kind {
	case Standalone:
		_, err := t.Servers()[0].Do(ctx, "PING")
		return err
	case Redlock:
		for _, n := range t.Servers() {
			if _, err := n.Do(ctx, "PING"); err != nil {
				return fmt.Errorf("%s: %w", n.Name, err)
			}
		}
		return nil
	case Cluster:
		return t.clusterHealthy(ctx)
	}
	shards, err := t.Shards(ctx)
	if err != nil {
		return err
	}
	sh := shards[0]
	if err := t.replicationUp(ctx, sh.Primary, sh.Replicas); err != nil {
		return err
	}
	if t.Kind == Sentinel {
		return t.sentinelsAgree(ctx, sh.Primary.Internal())
	}
	return nil
}

// AwaitHealthy polls Healthy until it holds or within passes; the error
// says what was last wrong.
func (t *Topology) AwaitHealthy(ctx context.Context, within time.Duration) error {
	return waitWithin(ctx, within, "a healthy "+string(t.Kind)+" topology", t.Healthy)
}
