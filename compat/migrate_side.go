package compat

import (
	"context"
	"fmt"
	"strings"

	"github.com/lockcheck/lockcheck/topology"
)

// holding is what a node holds of a case's keys in a phase of a slot
// migration, and so what it should answer to each lock command.
type holding int

const (
	// holds: every key is here, held by migToken; the node serves them.
	holds holding = iota
	// lacks: none of the keys is here, and the node takes commands for
	// them anyway (the importing target after ASKING).
	lacks
	// redirects: the node sends the client elsewhere (ASK or MOVED).
	redirects
)

// side is one node in one phase: what it holds and, when it redirects,
// the redirect it should answer ("ASK 1234 n1").
type side struct {
	holding  holding
	redirect string
}

// probe is one lock command as a cell shows it: the commands it sends
// (one, or a transaction) and what a build should answer on a side.
type probe struct {
	name string
	cmds func(k migKeys, far string) [][]string
	want func(f Features, s side) string
}

// refused stands for the build's refusal (unknown command or syntax
// error) in an expectation.
const refused = "refused"

// probes are the lock commands, in the order a cell lists them.
func probes() []probe {
	return []probe{
		{"acquire", one(func(k migKeys) []string { return []string{"SET", k.acquire, migToken, "NX", "PX", "30000"} }),
			wants(true, true, "(nil)", "OK")},
		{"extend", one(func(k migKeys) []string { return []string{"SET", k.extend, migToken, "IFEQ", migToken, "PX", "30000"} }),
			func(f Features, s side) string { return wants(f[IFEQ], true, "OK", topology.Nil)(f, s) }},
		{"delifeq", one(func(k migKeys) []string { return []string{"DELIFEQ", k.delifeq, migToken} }),
			func(f Features, s side) string { return wants(f[DELIFEQ], false, "1", "0")(f, s) }},
		{"delex", one(func(k migKeys) []string { return []string{"DELEX", k.delex, "IFEQ", migToken} }),
			func(f Features, s side) string { return wants(f[DELEX], false, "1", "0")(f, s) }},
		{"lua", one(func(k migKeys) []string { return []string{"EVAL", compareAndDelete, "1", k.lua, migToken} }),
			wants(true, true, "1", "0")},
		{"fenced", func(k migKeys, _ string) [][]string { return fencedTx(k.lock, k.fence) },
			func(f Features, s side) string {
				if askAtExec(f, s) {
					return s.redirect
				}
				return byHolding(s, "[(nil), 6]", "TRYAGAIN", "SET "+s.redirect+", INCR "+s.redirect+", EXEC EXECABORT")
			}},
		{"crossslot", func(k migKeys, far string) [][]string { return fencedTx(k.lock, far) },
			func(f Features, s side) string {
				if askAtExec(f, s) {
					return "CROSSSLOT"
				}
				return byHolding(s, "CROSSSLOT", "CROSSSLOT", "SET "+s.redirect+", INCR QUEUED, EXEC EXECABORT")
			}},
	}
}

// askAtExec: on a build that checks for missing keys only at EXEC, a
// transaction a migrating source would redirect with ASK is queued whole,
// and EXEC answers for it (ASK, or CROSSSLOT first when its keys are in
// two slots).
func askAtExec(f Features, s side) bool {
	return f[ASKAtExec] && s.holding == redirects && strings.HasPrefix(s.redirect, "ASK ")
}

func one(cmd func(migKeys) []string) func(migKeys, string) [][]string {
	return func(k migKeys, _ string) [][]string { return [][]string{cmd(k)} }
}

// fencedTx is the fenced acquire: the lock and a fence counter in one
// transaction.
func fencedTx(lock, fence string) [][]string {
	return [][]string{{"MULTI"}, {"SET", lock, migToken, "NX", "PX", "30000"}, {"INCR", fence}, {"EXEC"}}
}

// wants is a single command's expectation: the held and the missing
// key's answers on a build that has the command; a refusal on one that
// has not, except where parsed late (SET's options: a node that redirects
// redirects before it reads them).
func wants(has, parsedLate bool, held, missing string) func(Features, side) string {
	return func(_ Features, s side) string {
		if !has && !(parsedLate && s.holding == redirects) {
			return refused
		}
		return byHolding(s, held, missing, s.redirect)
	}
}

func byHolding(s side, held, missing, redirect string) string {
	switch s.holding {
	case holds:
		return held
	case lacks:
		return missing
	}
	return redirect
}

// render is what a probe's replies show in a cell: a transaction whose
// commands were all queued shows EXEC's reply; one with a refused command
// shows each.
func (e *env) render(rs []reply) string {
	if len(rs) == 1 {
		return e.brief(rs[0])
	}
	if rs[1].text == "QUEUED" && rs[2].text == "QUEUED" {
		return e.brief(rs[3])
	}
	return fmt.Sprintf("SET %s, INCR %s, EXEC %s", e.brief(rs[1]), e.brief(rs[2]), e.brief(rs[3]))
}

// sideView is one side's replies to every probe and what was expected.
type sideView struct {
	observed, expected []string
	ok                 bool
}

func (v sideView) String() string { return strings.Join(v.observed, "; ") }

// observeSide sends every probe to node n directly (with ASKING first
// when asking) and judges each reply against s.
func (e *env) observeSide(ctx context.Context, n *topology.Node, asking bool, k migKeys, s side) sideView {
	far, err := farFence(ctx, e, n, k.slot)
	if err != nil {
		return sideView{observed: []string{err.Error()}}
	}
	v := sideView{ok: true}
	for _, p := range probes() {
		got := e.render(send(ctx, n, asking, p.cmds(k, far)...))
		want := p.want(e.f, s)
		v.observed = append(v.observed, p.name+" "+got)
		v.expected = append(v.expected, p.name+" "+want)
		if got != want && !(want == refused && isRefusal(got)) {
			v.ok = false
		}
	}
	return v
}

// farFence is a fence counter in a slot other than slot that n owns, so
// that n itself, not a redirect, must refuse a transaction over it and
// the lock as CROSSSLOT.
func farFence(ctx context.Context, e *env, n *topology.Node, slot int) (string, error) {
	ranges, err := n.OwnedSlots(ctx)
	if err != nil {
		return "", err
	}
	for i := range 100000 {
		key := fmt.Sprintf("fence:{%sfar%d}", e.prefix, i)
		s := topology.KeySlot(key)
		for _, r := range ranges {
			if s != slot && s >= r[0] && s <= r[1] {
				return key, nil
			}
		}
	}
	return "", fmt.Errorf("no fence key found in a slot %s owns (%v)", n.Name, ranges)
}
