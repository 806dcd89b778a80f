package topology

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/valkey-io/valkey-go"
)

// ClusterID is the node's id in its cluster (CLUSTER MYID), which slot
// commands name nodes by. It is asked each time: a node that lost its
// nodes.conf would have a new one.
func (n *Node) ClusterID(ctx context.Context) (string, error) {
	id, err := n.Do(ctx, "CLUSTER", "MYID")
	if err != nil {
		return "", fmt.Errorf("id of %s: %w", n.Name, err)
	}
	return id, nil
}

// SlotOwner is the primary that owns slot, as the node with the newest
// config epoch among those that answer says: during a migration nodes
// may disagree for a moment, and a node cut off may hold an old view.
func (t *Topology) SlotOwner(ctx context.Context, slot int) (*Node, error) {
	if err := checkSlots(slot, slot); err != nil {
		return nil, err
	}
	return t.slotOwner(ctx, slot)
}

// OwnedSlots are the slot ranges (first and last inclusive) node n owns
// as n itself says.
func (n *Node) OwnedSlots(ctx context.Context) ([][2]int, error) {
	s, err := n.Do(ctx, "CLUSTER", "NODES")
	if err != nil {
		return nil, err
	}
	for _, line := range strings.Split(s, "\n") {
		if f := strings.Fields(line); len(f) > 2 && strings.Contains(f[2], "myself") {
			return parseClusterNodes(line)[0].ranges, nil
		}
	}
	return nil, fmt.Errorf("CLUSTER NODES on %s has no line for itself", n.Name)
}

// AwaitSlotOwner waits until every server whose container runs names
// owner as the owner of each slot from first to last, or within passes.
// A stopped server is not asked; a paused one makes the wait time out,
// as it cannot answer.
func (t *Topology) AwaitSlotOwner(ctx context.Context, first, last int, owner *Node, within time.Duration) error {
	if err := checkSlots(first, last); err != nil {
		return err
	}
	what := fmt.Sprintf("every running server to name %s the owner of slots %d-%d", owner.Name, first, last)
	return waitWithin(ctx, within, what, func(ctx context.Context) error {
		for _, n := range t.Servers() {
			if !n.Running(ctx) {
				continue
			}
			s, err := n.Do(ctx, "CLUSTER", "NODES")
			if err != nil {
				return err
			}
			if who := ownerIn(parseClusterNodes(s), first, last); who != owner.Internal() {
				return fmt.Errorf("%s names %q", n.Name, who)
			}
		}
		return nil
	})
}

// ownerIn is the address of the one primary that owns every slot from
// first to last in nodes, or what is wrong.
func ownerIn(nodes []clusterNode, first, last int) string {
	owner := ""
	for slot := first; slot <= last; slot++ {
		who := "nobody"
		for _, cn := range nodes {
			if cn.primary && inRanges(cn.ranges, slot) {
				who = cn.addr
			}
		}
		if owner != "" && who != owner {
			return fmt.Sprintf("%s for slot %d and %s for slot %d", owner, first, who, slot)
		}
		owner = who
	}
	return owner
}

func inRanges(ranges [][2]int, slot int) bool {
	for _, r := range ranges {
		if slot >= r[0] && slot <= r[1] {
			return true
		}
	}
	return false
}

func checkSlots(first, last int) error {
	if first < 0 || last >= Slots || first > last {
		return fmt.Errorf("slots %d-%d: want 0 <= first <= last < %d", first, last, Slots)
	}
	return nil
}

// do runs one command on n and returns the reply as valkey-go has it, for
// the replies that are lists of records rather than a line of text.
func (n *Node) do(ctx context.Context, args ...string) (valkey.ValkeyMessage, error) {
	c, err := n.Client()
	if err != nil {
		return valkey.ValkeyMessage{}, err
	}
	msg, err := c.Do(ctx, c.B().Arbitrary(args...).Build()).ToMessage()
	if err != nil {
		if _, ok := valkey.IsValkeyErr(err); ok {
			err = ServerError(rawError(msg, err))
		}
		return msg, fmt.Errorf("%s on %s: %w", strings.Join(args[:min(2, len(args))], " "), n.Name, err)
	}
	return msg, nil
}

// records reads a reply that is a list of records, each a map or (RESP2)
// a flat list of field and value, into string maps; a value that is not a
// string is rendered as ReplyText renders it.
func records(msg valkey.ValkeyMessage) ([]map[string]string, error) {
	items, err := msg.ToArray()
	if err != nil {
		return nil, fmt.Errorf("want a list of records, got %s", messageText(msg))
	}
	var out []map[string]string
	for _, it := range items {
		r, err := record(it)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, nil
}

func record(msg valkey.ValkeyMessage) (map[string]string, error) {
	if msg.IsMap() {
		kv, _ := msg.ToMap()
		r := make(map[string]string, len(kv))
		for k, v := range kv {
			r[k] = messageText(v)
		}
		return r, nil
	}
	fields, err := msg.ToArray()
	if err != nil || len(fields)%2 != 0 {
		return nil, fmt.Errorf("want a record of fields and values, got %s", messageText(msg))
	}
	r := make(map[string]string, len(fields)/2)
	for i := 0; i < len(fields); i += 2 {
		r[messageText(fields[i])] = messageText(fields[i+1])
	}
	return r, nil
}

// hasCommand says whether the server knows a command or a container's
// subcommand ("cluster|migrateslots"): COMMAND INFO answers nil for one it
// does not know.
func (n *Node) hasCommand(ctx context.Context, name string) (bool, error) {
	msg, err := n.do(ctx, "COMMAND", "INFO", name)
	if err != nil {
		return false, err
	}
	items, err := msg.ToArray()
	if err != nil || len(items) != 1 {
		return false, fmt.Errorf("COMMAND INFO %s on %s: want one entry, got %s", name, n.Name, messageText(msg))
	}
	return !items[0].IsNil(), nil
}

// requireCluster refuses the slot controls outside a cluster.
func (t *Topology) requireCluster(what string) error {
	if t.Kind != Cluster {
		return fmt.Errorf("%s: a %s topology has no slots", what, t.Kind)
	}
	return nil
}

func itoa(i int) string { return strconv.Itoa(i) }
