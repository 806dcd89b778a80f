package compat

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/valkey-io/valkey-go"

	"github.com/lockcheck/lockcheck/topology"
)

var clusterOnly = []topology.Kind{topology.Cluster}

func fenceCases() []Case {
	return []Case{
		{Name: "fence/acquired", run: func(ctx context.Context, e *env) verdict {
			obs := e.fenceTx(ctx, "fence", "t1")
			return always(obs, "[OK, n]", func(s string) bool { return strings.HasPrefix(s, "[OK, ") })
		}},
		{Name: "fence/held-counter-grows", run: func(ctx context.Context, e *env) verdict {
			first := e.fenceTx(ctx, "fenceheld", "t1")
			second := e.fenceTx(ctx, "fenceheld", "t2")
			obs := first + " then " + second
			var n1, n2 int
			_, e1 := fmt.Sscanf(first, "[OK, %d]", &n1)
			_, e2 := fmt.Sscanf(second, "[(nil), %d]", &n2)
			return always(obs, "[OK, n] then [(nil), n+1]", func(string) bool { return e1 == nil && e2 == nil && n2 == n1+1 })
		}},
		{Name: "fence/crossslot", Kinds: clusterOnly, run: func(ctx context.Context, e *env) verdict {
			lock, fence := crossSlotPair()
			n, err := e.t.Primary(ctx, lock)
			if err != nil {
				return verdict{Fail, err.Error(), ""}
			}
			c, err := n.Client()
			if err != nil {
				return verdict{Fail, err.Error(), ""}
			}
			res := c.DoMulti(ctx,
				c.B().Multi().Build(),
				c.B().Set().Key(lock).Value("t").Nx().Px(30*time.Second).Build(),
				c.B().Incr().Key(fence).Build(),
				c.B().Exec().Build())
			var parts []string
			for _, r := range res[1:] {
				parts = append(parts, replyOrError(r))
			}
			obs := fmt.Sprintf("%s and %s (slots %d, %d): %s", lock, fence, topology.KeySlot(lock), topology.KeySlot(fence), strings.Join(parts, "; "))
			return always(obs, "CROSSSLOT", contains("CROSSSLOT"))
		}},
		{Name: "cluster/slot-owner-serves-lock", Kinds: clusterOnly, run: func(ctx context.Context, e *env) verdict {
			k := e.key("owner")
			set := e.do(ctx, "SET", k, "t", "NX", "PX", "30000")
			n, err := e.t.Primary(ctx, k)
			if err != nil {
				return verdict{Fail, err.Error(), ""}
			}
			got := nodeDo(ctx, n, "GET", k)
			obs := fmt.Sprintf("SET %s; slot %d owner %s GET %s", set, topology.KeySlot(k), n.Name, got)
			return always(obs, "OK; the owner holds t", func(string) bool { return set == "OK" && got == "t" })
		}},
		{Name: "cluster/moved-followed", Kinds: clusterOnly, run: func(ctx context.Context, e *env) verdict {
			k := e.key("moved")
			owner, err := e.t.Primary(ctx, k)
			if err != nil {
				return verdict{Fail, err.Error(), ""}
			}
			var other *topology.Node
			for _, n := range e.t.Servers() {
				if r, _ := n.Role(ctx); r == topology.RolePrimary && n != owner {
					other = n
					break
				}
			}
			if other == nil {
				return verdict{Fail, "no second primary", ""}
			}
			moved := nodeDo(ctx, other, "SET", k, "t", "NX", "PX", "30000")
			followed := e.do(ctx, "SET", k, "t", "NX", "PX", "30000")
			obs := fmt.Sprintf("%s answers %s; the cluster client: %s", other.Name, moved, followed)
			return always(obs, "MOVED <slot> "+owner.Internal()+"; the cluster client: OK", func(string) bool {
				return strings.HasPrefix(moved, "MOVED") && strings.Contains(moved, owner.Internal()) && followed == "OK"
			})
		}},
	}
}

// fenceTx acquires name's lock and draws a fence in one transaction.
func (e *env) fenceTx(ctx context.Context, name, token string) string {
	c := e.c
	res := c.DoMulti(ctx,
		c.B().Multi().Build(),
		c.B().Set().Key(e.key(name)).Value(token).Nx().Px(30*time.Second).Build(),
		c.B().Incr().Key(e.fenceKey(name)).Build(),
		c.B().Exec().Build())
	for _, r := range res[:3] {
		if err := r.Error(); err != nil && !valkey.IsValkeyNil(err) {
			return err.Error()
		}
	}
	return replyOrError(res[3])
}

// crossSlotPair finds a lock key and a fence key without a shared hash tag,
// in different slots owned by the same primary (n0's third), so the server
// itself, not a redirect, must refuse the transaction.
func crossSlotPair() (lock, fence string) {
	r := topology.SlotRanges(3)[0]
	in := func(k string) bool { s := topology.KeySlot(k); return s >= r[0] && s <= r[1] }
	for i := 0; ; i++ {
		lock = fmt.Sprintf("lock:job%d", i)
		if !in(lock) {
			continue
		}
		for j := 0; j < 1000; j++ {
			fence = fmt.Sprintf("fence:job%d", j)
			if in(fence) && topology.KeySlot(fence) != topology.KeySlot(lock) {
				return lock, fence
			}
		}
	}
}
