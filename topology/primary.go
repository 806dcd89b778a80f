package topology

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Primary is the node that holds key's primary copy now: the cluster's
// owner of the key's slot, the primary Sentinel names, or the server that
// reports the primary role. It asks live nodes, so it follows failovers.
func (t *Topology) Primary(ctx context.Context, key string) (*Node, error) {
	switch t.Kind {
	case Sentinel:
		return t.sentinelPrimary(ctx)
	case Cluster:
		return t.slotOwner(ctx, KeySlot(key))
	}
	var errs []error
	for _, n := range t.Servers() {
		role, err := n.Role(ctx)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if role == RolePrimary {
			return n, nil
		}
	}
	return nil, fmt.Errorf("no server reports the primary role: %w", errors.Join(errs...))
}

// sentinelPrimary asks the sentinels in turn; a paused or cut-off one is
// skipped.
func (t *Topology) sentinelPrimary(ctx context.Context) (*Node, error) {
	var errs []error
	for _, s := range t.Sentinels() {
		c, err := s.Client()
		if err != nil {
			errs = append(errs, err)
			continue
		}
		addr, err := c.Do(ctx, c.B().Arbitrary("SENTINEL", "GET-MASTER-ADDR-BY-NAME", MasterSet).Build()).AsStrSlice()
		if err != nil || len(addr) != 2 {
			errs = append(errs, fmt.Errorf("%s: %v", s.Name, err))
			continue
		}
		if n := t.byInternal(addr[0] + ":" + addr[1]); n != nil {
			return n, nil
		}
		errs = append(errs, fmt.Errorf("%s names unknown primary %s:%s", s.Name, addr[0], addr[1]))
	}
	return nil, fmt.Errorf("no sentinel names the primary: %w", errors.Join(errs...))
}

// slotOwner asks the nodes for the slot's owner and takes the answer with
// the newest config epoch: a node that was cut off may still believe in an
// old owner.
func (t *Topology) slotOwner(ctx context.Context, slot int) (*Node, error) {
	var errs []error
	var best *Node
	bestEpoch := -1
	for _, n := range t.Servers() {
		s, err := n.Do(ctx, "CLUSTER", "NODES")
		if err != nil {
			errs = append(errs, err)
			continue
		}
		for _, line := range strings.Split(s, "\n") {
			f := strings.Fields(line)
			if len(f) < 8 {
				continue
			}
			if primary, failed := nodeFlags(f[2]); !primary || failed {
				continue
			}
			if !ownsSlot(f[8:], slot) {
				continue
			}
			epoch, _ := strconv.Atoi(f[6])
			addr := f[1]
			if i := strings.IndexAny(addr, "@,"); i >= 0 {
				addr = addr[:i]
			}
			if o := t.byInternal(addr); o != nil && epoch > bestEpoch {
				best, bestEpoch = o, epoch
			}
		}
	}
	if best == nil {
		return nil, fmt.Errorf("no node names an owner of slot %d: %w", slot, errors.Join(errs...))
	}
	return best, nil
}

func ownsSlot(ranges []string, slot int) bool {
	for _, r := range ranges {
		if strings.HasPrefix(r, "[") {
			continue
		}
		lo, hi, found := strings.Cut(r, "-")
		a, _ := strconv.Atoi(lo)
		b := a
		if found {
			b, _ = strconv.Atoi(hi)
		}
		if slot >= a && slot <= b {
			return true
		}
	}
	return false
}

// NodeAt is the node whose announced address (container IP and port) is
// addr, or nil.
func (t *Topology) NodeAt(addr string) *Node { return t.byInternal(addr) }

func (t *Topology) byInternal(addr string) *Node {
	for _, n := range t.Nodes {
		if n.Internal() == addr {
			return n
		}
	}
	return nil
}
