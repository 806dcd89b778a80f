package compat

import (
	"context"
	"fmt"
	"strings"

	"github.com/valkey-io/valkey-go"

	"github.com/lockcheck/lockcheck/topology"
)

// migKeys are the keys of one migration case. Every lock command has a
// lock key of its own, so that a release observed on one side does not
// change what the next command finds; all share one hash tag and so one
// slot, which is the slot the case migrates. far is a fence counter in
// another slot, for the transaction that must be refused as CROSSSLOT.
type migKeys struct {
	slot                                       int
	acquire, extend, delifeq, delex, lua, lock string
	fence                                      string
}

// migToken is what every lock key holds before the migration; migFence is
// the fence counter's value then.
const (
	migToken = "t"
	migFence = "5"
)

func (e *env) migKeys(name string) migKeys {
	tag := "{" + e.prefix + name + "}"
	return migKeys{
		slot:    topology.KeySlot(tag),
		acquire: "acquire:" + tag, extend: "extend:" + tag, delifeq: "delifeq:" + tag,
		delex: "delex:" + tag, lua: "lua:" + tag, lock: "lock:" + tag, fence: "fence:" + tag,
	}
}

func (k migKeys) all() []string {
	return []string{k.acquire, k.extend, k.delifeq, k.delex, k.lua, k.lock, k.fence}
}

// hold sets every lock key to migToken with a TTL and the fence counter to
// migFence, through the cluster client, before the slot moves.
func (e *env) hold(ctx context.Context, k migKeys) error {
	for _, key := range k.all() {
		v := migToken
		if key == k.fence {
			v = migFence
		}
		if got := e.do(ctx, "SET", key, v, "PX", "30000"); got != "OK" {
			return fmt.Errorf("SET %s before the migration: %s", key, got)
		}
	}
	return nil
}

// send runs cmds on node n's own connection, which follows no redirect,
// as one pipeline: with asking, ASKING goes first on that connection and
// its reply is dropped (an error in it is returned as every reply).
func send(ctx context.Context, n *topology.Node, asking bool, cmds ...[]string) []reply {
	c, err := n.Client()
	if err != nil {
		return repeat(reply{text: err.Error(), err: true}, len(cmds))
	}
	var built []valkey.Completed
	if asking {
		built = append(built, c.B().Asking().Build())
	}
	for _, cmd := range cmds {
		built = append(built, c.B().Arbitrary(cmd...).Build())
	}
	res := c.DoMulti(ctx, built...)
	if asking {
		if r := toReply(res[0]); r.err {
			return repeat(reply{text: "ASKING: " + r.text, err: true}, len(cmds))
		}
		res = res[1:]
	}
	out := make([]reply, len(res))
	for i, r := range res {
		out[i] = toReply(r)
	}
	return out
}

// reply is one reply as text; err marks an error reply or a failure.
type reply struct {
	text string
	err  bool
}

func toReply(r valkey.ValkeyResult) reply {
	s, err := topology.ReplyText(r)
	if err != nil {
		return reply{text: err.Error(), err: true}
	}
	return reply{text: s}
}

func repeat(r reply, n int) []reply {
	out := make([]reply, n)
	for i := range out {
		out[i] = r
	}
	return out
}

// brief shortens a reply for a cell: a redirect keeps its kind and slot
// and names the node it points at, a refusal says which, another error
// keeps its code (CROSSSLOT, TRYAGAIN, EXECABORT); a value stays as is.
func (e *env) brief(r reply) string {
	if !r.err {
		return r.text
	}
	f := strings.Fields(r.text)
	switch {
	case len(f) == 3 && (f[0] == "ASK" || f[0] == "MOVED"):
		for _, n := range e.t.Servers() {
			if n.Internal() == f[2] {
				return f[0] + " " + f[1] + " " + n.Name
			}
		}
		return r.text
	case strings.Contains(r.text, "unknown command"):
		return "unknown command"
	case strings.Contains(r.text, "syntax error"):
		return "syntax error"
	case len(f) > 0 && f[0] != "ERR" && strings.ToUpper(f[0]) == f[0]:
		return f[0]
	}
	return r.text
}
