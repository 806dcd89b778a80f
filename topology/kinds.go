package topology

import (
	"context"
	"fmt"
	"maps"
	"strconv"
	"strings"
	"time"
)

func (t *Topology) startStandalone(ctx context.Context) error {
	if err := t.addNodes(ctx, []nodeSpec{{name: "n0", index: 0, conf: serverConfig(Standalone, "", t.opts)}}); err != nil {
		return err
	}
	return t.waitPing(ctx, t.Nodes)
}

// startRedlock starts Options.Nodes standalone primaries that know
// nothing of each other, each with its own clock shim and client link.
func (t *Topology) startRedlock(ctx context.Context) error {
	if t.opts.Nodes < 1 || t.opts.Nodes > 9 {
		return fmt.Errorf("a redlock topology has 1 to 9 nodes, not %d", t.opts.Nodes)
	}
	var specs []nodeSpec
	for i := range t.opts.Nodes {
		specs = append(specs, nodeSpec{name: fmt.Sprintf("n%d", i), index: i, conf: serverConfig(Redlock, "", t.opts)})
	}
	if err := t.addNodes(ctx, specs); err != nil {
		return err
	}
	return t.waitPing(ctx, t.Nodes)
}

// startServers starts a primary n0 and replicas n1..n(count-1), and with
// them the nodes of more (a Sentinel topology's sentinels), all at once.
// The replicas are told REPLICAOF once they answer (and keep it in their
// rewritten configuration): a replicaof line in the file would wait for
// the replica's once-a-second replication cron to connect.
func (t *Topology) startServers(ctx context.Context, count int, more ...nodeSpec) error {
	primary := t.nodeIP(0).String() + fmt.Sprintf(":%d", ServerPort)
	var specs []nodeSpec
	for i := range count {
		specs = append(specs, nodeSpec{name: fmt.Sprintf("n%d", i), index: i, conf: serverConfig(t.Kind, "", t.opts)})
	}
	if err := t.addNodes(ctx, append(specs, more...)); err != nil {
		return err
	}
	servers := t.Servers()
	if err := t.waitPing(ctx, servers); err != nil {
		return err
	}
	host, port, _ := strings.Cut(primary, ":")
	for _, r := range servers[1:] {
		if _, err := r.Do(ctx, "REPLICAOF", host, port); err != nil {
			return err
		}
		if _, err := r.Do(ctx, "CONFIG", "REWRITE"); err != nil {
			return err
		}
	}
	return t.waitFor(ctx, "replication links up", func(ctx context.Context) error {
		return t.replicationUp(ctx, servers[0], servers[1:])
	})
}

func (t *Topology) startReplicated(ctx context.Context) error { return t.startServers(ctx, 3) }

// startSentinel starts the servers and three sentinels at once, each
// sentinel configured with the deployment it would otherwise discover.
func (t *Topology) startSentinel(ctx context.Context) error {
	primary := t.nodeIP(0).String() + fmt.Sprintf(":%d", ServerPort)
	var replicas []string
	for i := 1; i < 3; i++ {
		replicas = append(replicas, fmt.Sprintf("%s:%d", t.nodeIP(i), ServerPort))
	}
	ids := map[string]string{}
	for i := range 3 {
		ids[fmt.Sprintf("%s:%d", t.nodeIP(3+i), SentinelPort)] = sentinelID(t.RunID, i)
	}
	var specs []nodeSpec
	for i := range 3 {
		self := fmt.Sprintf("%s:%d", t.nodeIP(3+i), SentinelPort)
		peers := maps.Clone(ids)
		delete(peers, self)
		specs = append(specs, nodeSpec{name: fmt.Sprintf("s%d", i), index: 3 + i, sentinel: true, conf: sentinelConfig(primary, ids[self], replicas, peers, t.opts)})
	}
	if err := t.startServers(ctx, 3, specs...); err != nil {
		return err
	}
	sentinels := t.Sentinels()
	if err := t.waitPing(ctx, sentinels); err != nil {
		return err
	}
	// A sentinel that reached a server or a peer before it listened tries
	// again only after its ping period (1 s), and reads a replica's INFO
	// (its role and priority) every 10 s: its first reading may be of a
	// replica not yet told REPLICAOF. While the topology starts, each
	// sentinel pings, reconnects and reads INFO every startPeriod
	// (SENTINEL DEBUG, in every build here), and gets its own ping period
	// back with the real detection time.
	pings := make([]string, len(sentinels))
	for i, s := range sentinels {
		p, err := sentinelPingPeriod(ctx, s)
		if err != nil {
			return err
		}
		pings[i] = p
		if _, err := s.Do(ctx, "SENTINEL", "DEBUG", "ping-period", millis(startPeriod), "info-period", millis(startPeriod)); err != nil {
			return err
		}
	}
	if err := t.waitFor(ctx, "sentinels to agree on the primary", func(ctx context.Context) error {
		return t.sentinelsAgree(ctx, primary)
	}); err != nil {
		return err
	}
	// the real detection time, now that nothing can look down at start,
	// the server's own ping period, and the INFO and hello periods the
	// topology runs with (Options.InfoPeriod, HelloPeriod)
	for i, s := range sentinels {
		if _, err := s.Do(ctx, "SENTINEL", "SET", MasterSet, "down-after-milliseconds", millis(t.opts.DownAfter)); err != nil {
			return err
		}
		if _, err := s.Do(ctx, "SENTINEL", "DEBUG", "ping-period", pings[i],
			"info-period", millis(t.opts.InfoPeriod), "publish-period", millis(t.opts.HelloPeriod)); err != nil {
			return err
		}
	}
	return nil
}

// startPeriod is how often a sentinel pings (and may reconnect) and reads
// INFO while its topology starts.
const startPeriod = 100 * time.Millisecond

// millis is d in whole milliseconds, as Sentinel's settings take it.
func millis(d time.Duration) string { return strconv.FormatInt(d.Milliseconds(), 10) }

// sentinelPingPeriod is a sentinel's ping period in milliseconds, as
// SENTINEL DEBUG reports it.
func sentinelPingPeriod(ctx context.Context, s *Node) (string, error) {
	c, err := s.Client()
	if err != nil {
		return "", err
	}
	m, err := c.Do(ctx, c.B().Arbitrary("SENTINEL", "DEBUG").Build()).AsStrMap()
	if err != nil {
		return "", fmt.Errorf("SENTINEL DEBUG on %s: %w", s.Name, err)
	}
	if m["PING-PERIOD"] == "" {
		return "", fmt.Errorf("SENTINEL DEBUG on %s reports no PING-PERIOD", s.Name)
	}
	return m["PING-PERIOD"], nil
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
// replicas and the two other sentinels, and has had an answer from each
// within the last second: only then can they fail over.
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
		// Told of its deployment in its configuration, a sentinel knows
		// it before it has reached it: also require it to be in touch
		// with each, or a shorter down-after would find them silent.
		if m["flags"] != "master" || atoi(m["last-ok-ping-reply"]) >= 1000 {
			return fmt.Errorf("%s sees the primary as %q, last answered %s ms ago", s.Name, m["flags"], m["last-ok-ping-reply"])
		}
		for _, list := range []string{"REPLICAS", "SENTINELS"} {
			peers, err := c.Do(ctx, c.B().Arbitrary("SENTINEL", list, MasterSet).Build()).ToArray()
			if err != nil {
				return fmt.Errorf("%s: SENTINEL %s: %w", s.Name, list, err)
			}
			for _, p := range peers {
				pm, err := p.AsStrMap()
				if err != nil {
					return fmt.Errorf("%s: SENTINEL %s: %w", s.Name, list, err)
				}
				if f := pm["flags"]; (f != "slave" && f != "sentinel") || atoi(pm["last-ok-ping-reply"]) >= 1000 {
					return fmt.Errorf("%s sees %s as %q, last answered %s ms ago", s.Name, pm["name"], f, pm["last-ok-ping-reply"])
				}
				// A failover picks a replica by what its INFO said: until
				// a sentinel has read the replica's INFO as a replica's
				// (before REPLICAOF it answered as a primary), it holds
				// the replica's priority as the default 100, and a
				// replica-priority 0 node could be promoted. Its link as
				// that INFO saw it is not required: a sentinel reads a
				// replica whose link is down once a second, whatever its
				// INFO period, and replicationUp has seen the link up.
				if list == "REPLICAS" && pm["role-reported"] != "slave" {
					return fmt.Errorf("%s last read %s's INFO as role %q", s.Name, pm["name"], pm["role-reported"])
				}
			}
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
