package topology

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/moby/moby/client"
	tcexec "github.com/testcontainers/testcontainers-go/exec"
)

// Kill sends SIGKILL to the node's server process. The container stops;
// Restart brings it back.
func (n *Node) Kill(ctx context.Context) error {
	if err := n.signal(ctx, "KILL"); err != nil {
		return fmt.Errorf("kill %s: %w", n.Name, err)
	}
	return nil
}

// Crash kills the node's server (SIGKILL) and starts it again after down
// (0: at once) with what survives. A SIGKILL loses nothing a server wrote
// (the kernel still has its files): the node keeps its AOF, or nothing
// without AOF (snapshots are off). powerLoss emulates a power loss
// instead, which keeps only what was synced: with appendfsync always
// everything, otherwise (everysec, no) the node comes back without its
// data, the worst such a loss can do. A lock key is at most a lease old,
// so for a lease of a second or more, which a crash inside a lease needs
// to matter, everysec can lose it too.
func (n *Node) Crash(ctx context.Context, down time.Duration, powerLoss bool) (err error) {
	// the node comes back whatever happens below, also when ctx ends
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
	defer cancel()
	defer func() {
		if rerr := n.Restart(rctx, n.KeepsData(powerLoss)); rerr != nil {
			err = errors.Join(err, rerr)
		}
	}()
	if err := n.Kill(ctx); err != nil {
		return err
	}
	if err := n.waitStopped(rctx); err != nil {
		return fmt.Errorf("crash %s: %w", n.Name, err)
	}
	if down > 0 {
		t := time.NewTimer(down)
		select {
		case <-ctx.Done():
		case <-t.C:
		}
		t.Stop()
	}
	return nil
}

// KeepsData says whether the node's data survives a SIGKILL (AOF on) or a
// power loss (AOF with appendfsync always).
func (n *Node) KeepsData(powerLoss bool) bool {
	o := n.topo.opts
	return o.AOF && (!powerLoss || o.Fsync == FsyncAlways)
}

// Pause stops the server process with SIGSTOP: it keeps its sockets and
// wakes up where it was, like a long stall.
func (n *Node) Pause(ctx context.Context) error {
	if err := n.signal(ctx, "STOP"); err != nil {
		return fmt.Errorf("pause %s: %w", n.Name, err)
	}
	return nil
}

// Resume continues a paused server process with SIGCONT.
func (n *Node) Resume(ctx context.Context) error {
	if err := n.signal(ctx, "CONT"); err != nil {
		return fmt.Errorf("resume %s: %w", n.Name, err)
	}
	return nil
}

func (n *Node) signal(ctx context.Context, sig string) error {
	_, err := n.topo.eng.cli.ContainerKill(ctx, n.c.GetContainerID(), client.ContainerKillOptions{Signal: sig})
	return err
}

// Restart stops the node if it runs and starts it again at the same
// address. With keepData a running server saves a snapshot first and the
// data files stay; without it they are removed, and the node comes back
// empty (a cluster node keeps its nodes.conf and so its identity).
func (n *Node) Restart(ctx context.Context, keepData bool) error {
	running := n.Running(ctx)
	if running && keepData && !n.Sentinel {
		if _, err := n.Do(ctx, "SAVE"); err != nil {
			return fmt.Errorf("restart %s: %w", n.Name, err)
		}
	}
	if running {
		if err := n.signal(ctx, "KILL"); err != nil {
			return fmt.Errorf("restart %s: %w", n.Name, err)
		}
		if err := n.waitStopped(ctx); err != nil {
			return fmt.Errorf("restart %s: %w", n.Name, err)
		}
	}
	if !keepData {
		// The container is stopped: the marker is copied into its file
		// system and the launch script removes the data files.
		if err := n.c.CopyToContainer(ctx, []byte("wipe\n"), wipeMarker, 0o644); err != nil {
			return fmt.Errorf("restart %s: mark data for removal: %w", n.Name, err)
		}
	}
	n.closeClient()
	if _, err := n.topo.eng.cli.ContainerStart(ctx, n.c.GetContainerID(), client.ContainerStartOptions{}); err != nil {
		return fmt.Errorf("restart %s: %w", n.Name, err)
	}
	if err := n.topo.mapPort(ctx, n); err != nil {
		return fmt.Errorf("restart %s: %w", n.Name, err)
	}
	if err := n.topo.waitFor(ctx, n.Name+" to answer PING", func(ctx context.Context) error {
		_, err := n.Do(ctx, "PING")
		return err
	}); err != nil {
		return fmt.Errorf("restart %s: %w", n.Name, err)
	}
	return nil
}

// Running reports whether the node's container is running.
func (n *Node) Running(ctx context.Context) bool {
	st, err := n.c.State(ctx)
	return err == nil && st.Running
}

func (n *Node) waitStopped(ctx context.Context) error {
	deadline := time.Now().Add(10 * time.Second)
	for n.Running(ctx) {
		if time.Now().After(deadline) {
			return fmt.Errorf("container still running 10 s after SIGKILL")
		}
		time.Sleep(20 * time.Millisecond)
	}
	return nil
}

// Side is whom a partition cuts a node off from.
type Side string

const (
	// FromPeers cuts the node off from every other node of its topology:
	// replication, the cluster bus and Sentinel's probes stop, while
	// clients on the host still reach it.
	FromPeers Side = "peers"
	// FromClients cuts the node off from clients on the host, whose
	// traffic arrives through the network's gateway; its peers still reach
	// it.
	FromClients Side = "clients"
)

// Partition drops the node's traffic to and from one side, with iptables
// rules in the node's own network namespace. Packets are dropped, not
// refused, as on a real cut link.
func (n *Node) Partition(ctx context.Context, side Side) error {
	var addrs []string
	switch side {
	case FromPeers:
		for _, o := range n.topo.Nodes {
			if o != n {
				addrs = append(addrs, o.IP.String())
			}
		}
	case FromClients:
		addrs = []string{n.topo.gateway.String()}
	default:
		return fmt.Errorf("partition %s: unknown side %q", n.Name, side)
	}
	if err := n.exec(ctx, "sh", "-c", partitionScript(addrs)); err != nil {
		return fmt.Errorf("partition %s from %s: %w", n.Name, side, err)
	}
	return nil
}

// Cut drops the node's traffic to and from the given peers only, as on a
// broken replication link. Heal undoes it.
func (n *Node) Cut(ctx context.Context, peers ...*Node) error {
	var addrs []string
	for _, p := range peers {
		addrs = append(addrs, p.IP.String())
	}
	if err := n.exec(ctx, "sh", "-c", partitionScript(addrs)); err != nil {
		return fmt.Errorf("cut %s off: %w", n.Name, err)
	}
	return nil
}

// Heal removes every partition rule of the node.
func (n *Node) Heal(ctx context.Context) error {
	if err := n.exec(ctx, "sh", "-c", healScript); err != nil {
		return fmt.Errorf("heal %s: %w", n.Name, err)
	}
	return nil
}

const chain = "LOCKCHECK"

// partitionScript adds DROP rules for addrs to the node's own chain, which
// both INPUT and OUTPUT jump to, so Heal can flush it whole.
func partitionScript(addrs []string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "iptables -N %[1]s 2>/dev/null; iptables -C INPUT -j %[1]s 2>/dev/null || iptables -I INPUT -j %[1]s; iptables -C OUTPUT -j %[1]s 2>/dev/null || iptables -I OUTPUT -j %[1]s", chain)
	for _, a := range addrs {
		fmt.Fprintf(&b, " && iptables -A %[1]s -s %[2]s -j DROP && iptables -A %[1]s -d %[2]s -j DROP", chain, a)
	}
	return b.String()
}

var healScript = fmt.Sprintf("iptables -F %s 2>/dev/null; true", chain)

// Exec runs a command in the node's container and returns its output;
// a non-zero exit is an error that carries the output.
func (n *Node) Exec(ctx context.Context, cmd ...string) (string, error) {
	code, out, err := n.c.Exec(ctx, cmd, tcexec.Multiplexed())
	if err != nil {
		return "", fmt.Errorf("exec %s: %w", cmd[0], err)
	}
	b, _ := io.ReadAll(out)
	text := strings.TrimSpace(string(b))
	if code != 0 {
		return text, fmt.Errorf("%s exited %d: %s", cmd[0], code, text)
	}
	return text, nil
}

func (n *Node) exec(ctx context.Context, cmd ...string) error {
	_, err := n.Exec(ctx, cmd...)
	return err
}

// Family is the server lineage the node runs, which names its tools
// (valkey-cli or redis-cli).
func (n *Node) Family() Family { return n.topo.Build.Family }
