package topology

import (
	"context"
	"fmt"
	"strings"
)

func (t *Topology) startStandalone(ctx context.Context) error {
	if err := t.addNodes(ctx, []nodeSpec{{name: "n0", index: 0, conf: serverConfig(Standalone, "", t.opts)}}); err != nil {
		return err
	}
	return t.waitPing(ctx, t.Nodes)
}

// startServers starts a primary n0 and replicas n1..n(count-1) following it.
func (t *Topology) startServers(ctx context.Context, count int) error {
	primary := t.nodeIP(0).String() + fmt.Sprintf(":%d", ServerPort)
	specs := []nodeSpec{{name: "n0", index: 0, conf: serverConfig(t.Kind, "", t.opts)}}
	for i := 1; i < count; i++ {
		specs = append(specs, nodeSpec{name: fmt.Sprintf("n%d", i), index: i, conf: serverConfig(t.Kind, primary, t.opts)})
	}
	if err := t.addNodes(ctx, specs); err != nil {
		return err
	}
	if err := t.waitPing(ctx, t.Nodes); err != nil {
		return err
	}
	return t.waitFor(ctx, "replication links up", func(ctx context.Context) error {
		return t.replicationUp(ctx, t.Nodes[0], t.Nodes[1:])
	})
}

func (t *Topology) startReplicated(ctx context.Context) error { return t.startServers(ctx, 3) }

func (t *Topology) startSentinel(ctx context.Context) error {
	if err := t.startServers(ctx, 3); err != nil {
		return err
	}
	primary := t.Nodes[0].Internal()
	var specs []nodeSpec
	for i := range 3 {
		specs = append(specs, nodeSpec{name: fmt.Sprintf("s%d", i), index: 3 + i, sentinel: true, conf: sentinelConfig(primary, t.opts)})
	}
	if err := t.addNodes(ctx, specs); err != nil {
		return err
	}
	return t.waitFor(ctx, "sentinels to agree on the primary", func(ctx context.Context) error {
		return t.sentinelsAgree(ctx, primary)
	})
}

// replicationUp holds when the primary counts every replica online and each
// replica's link is up.
func (t *Topology) replicationUp(ctx context.Context, primary *Node, replicas []*Node) error {
	for _, r := range replicas {
		info, err := r.Info(ctx, "replication")
		if err != nil {
			return err
		}
		if info["master_link_status"] != "up" {
			return fmt.Errorf("%s: master_link_status %q", r.Name, info["master_link_status"])
		}
	}
	info, err := primary.Info(ctx, "replication")
	if err != nil {
		return err
	}
	if got := atoi(info["connected_slaves"]); got < len(replicas) {
		return fmt.Errorf("%s: %d replicas connected, want %d", primary.Name, got, len(replicas))
	}
	return nil
}

// sentinelsAgree holds when every sentinel names primary, knows both
// replicas and the two other sentinels: only then can they fail over.
func (t *Topology) sentinelsAgree(ctx context.Context, primary string) error {
	for _, s := range t.Sentinels() {
		c, err := s.Client()
		if err != nil {
			return err
		}
		addr, err := c.Do(ctx, c.B().Arbitrary("SENTINEL", "GET-MASTER-ADDR-BY-NAME", MasterSet).Build()).AsStrSlice()
		if err != nil {
			return fmt.Errorf("%s: %w", s.Name, err)
		}
		if got := strings.Join(addr, ":"); got != primary {
			return fmt.Errorf("%s names primary %s, want %s", s.Name, got, primary)
		}
		m, err := c.Do(ctx, c.B().Arbitrary("SENTINEL", "MASTER", MasterSet).Build()).AsStrMap()
		if err != nil {
			return fmt.Errorf("%s: %w", s.Name, err)
		}
		if m["num-slaves"] != "2" || m["num-other-sentinels"] != "2" {
			return fmt.Errorf("%s knows %s replicas and %s other sentinels, want 2 and 2", s.Name, m["num-slaves"], m["num-other-sentinels"])
		}
	}
	return nil
}

func (t *Topology) waitPing(ctx context.Context, nodes []*Node) error {
	for _, n := range nodes {
		if err := t.waitFor(ctx, n.Name+" to answer PING", func(ctx context.Context) error {
			_, err := n.Do(ctx, "PING")
			return err
		}); err != nil {
			return err
		}
	}
	return nil
}
