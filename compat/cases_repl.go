package compat

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/valkey-io/valkey-go"

	"github.com/lockcheck/lockcheck/topology"
)

var withReplicas = []topology.Kind{topology.Replicated, topology.Sentinel, topology.Cluster}

// replicationCases observe what a replica receives and what WAIT and
// WAITAOF answer.
func replicationCases() []Case {
	return []Case{
		{Name: "repl/set-px-as-pxat", Kinds: withReplicas, run: pxFedAsPxat},
		{Name: "repl/delifeq-as-del", Kinds: withReplicas, run: delifeqFedAsDel},
		{Name: "repl/delifeq-as-del-in-aof", Kinds: []topology.Kind{topology.Standalone}, run: delifeqInAOF},
		{Name: "wait/wait", run: func(ctx context.Context, e *env) verdict {
			k := e.key("wait")
			if e.t.Kind == topology.Standalone {
				// No replica can ever acknowledge: WAIT answers 0 when its
				// timeout ends, however short, whatever the machine's speed.
				obs := e.pipeline(ctx, k, []string{"SET", k, "t", "PX", "30000"}, []string{"WAIT", "1", "100"})[1]
				return always(obs, "0 (no replica)", equals("0"))
			}
			// WAIT returns as soon as the replica acknowledges; the timeout
			// only bounds a replica that never does, so it is generous (well
			// inside the case's 30 s) for a loaded machine.
			obs := e.pipeline(ctx, k, []string{"SET", k, "t", "PX", "30000"}, []string{"WAIT", "1", blockTimeout})[1]
			return always(obs, ">= 1", func(s string) bool { return s != "0" && !strings.Contains(s, "ERR") })
		}},
		{Name: "wait/waitaof-replicas", run: func(ctx context.Context, e *env) verdict {
			k := e.key("waitaof")
			obs := e.pipeline(ctx, k, []string{"SET", k, "t", "PX", "30000"}, []string{"WAITAOF", "0", "1", "100"})[1]
			want := "[0, 0] (no AOF: replicas without AOF do not count)"
			return expect(e.f[WAITAOF], obs, want, equals("[0, 0]"))
		}},
		{Name: "wait/waitaof-local-without-aof", run: func(ctx context.Context, e *env) verdict {
			k := e.key("waitaof1")
			obs := e.pipeline(ctx, k, []string{"SET", k, "t"}, []string{"WAITAOF", "1", "1", "100"})[1]
			return expect(e.f[WAITAOF], obs, "ERR ... appendonly is disabled", contains("appendonly"))
		}},
		{Name: "wait/waitaof-with-aof", Kinds: []topology.Kind{topology.Standalone}, run: func(ctx context.Context, e *env) verdict {
			n := e.t.Servers()[0]
			if err := enableAOF(ctx, n); err != nil {
				return verdict{Fail, err.Error(), "AOF on"}
			}
			defer n.Do(context.WithoutCancel(ctx), "CONFIG", "SET", "appendonly", "no")
			k := e.key("waitaofon")
			// WAITAOF returns as soon as the local fsync is done; the timeout
			// only bounds one that never is.
			obs := e.pipeline(ctx, k, []string{"SET", k, "t"}, []string{"WAITAOF", "1", "0", blockTimeout})[1]
			return expect(e.f[WAITAOF], obs, "[1, 0]", equals("[1, 0]"))
		}},
	}
}

// pxFedAsPxat: a replica receives SET ... PX as SET ... PXAT, so both
// nodes expire the lock at the same instant.
func pxFedAsPxat(ctx context.Context, e *env) verdict {
	k := e.key("pxat")
	primary, replica, err := e.pair(ctx, k)
	if err != nil {
		return verdict{Fail, err.Error(), ""}
	}
	m, err := startMonitor(ctx, replica)
	if err != nil {
		return verdict{Fail, err.Error(), ""}
	}
	defer m.close()
	e.do(ctx, "SET", k, "t", "NX", "PX", "30000")
	fed := m.await(k, awaitFed)
	if e.t.Kind == topology.Cluster {
		// A cluster replica redirects reads unless told otherwise.
		replica.Do(ctx, "READONLY")
	}
	pt := nodeDo(ctx, primary, "PEXPIRETIME", k)
	rt := nodeDo(ctx, replica, "PEXPIRETIME", k)
	obs := fmt.Sprintf("replica received: %s; PEXPIRETIME primary %s, replica %s", orNone(fed), pt, rt)
	return always(obs, "SET ... PXAT <absolute ms>, equal PEXPIRETIME on both", func(string) bool {
		return strings.Contains(fed, "PXAT") && pt == rt && pt != "-1" && pt != "-2"
	})
}

// delifeqFedAsDel: a replica receives a DELIFEQ that deleted as a DEL,
// which an older replica also understands.
func delifeqFedAsDel(ctx context.Context, e *env) verdict {
	k := e.key("deldel")
	_, replica, err := e.pair(ctx, k)
	if err != nil {
		return verdict{Fail, err.Error(), ""}
	}
	e.do(ctx, "SET", k, "t", "PX", "30000")
	m, err := startMonitor(ctx, replica)
	if err != nil {
		return verdict{Fail, err.Error(), ""}
	}
	defer m.close()
	got := e.do(ctx, "DELIFEQ", k, "t")
	if got != "1" {
		return expect(e.f[DELIFEQ], got, "1, fed to the replica as DEL", equals(""))
	}
	fed := m.await(k, awaitFed, "SET")
	return expect(e.f[DELIFEQ], "1; replica received: "+orNone(fed), "1; replica received: DEL "+k, equals("1; replica received: DEL "+k))
}

// delifeqInAOF: the AOF holds a DELIFEQ that deleted as a DEL, so a
// restart replays the delete.
func delifeqInAOF(ctx context.Context, e *env) verdict {
	n := e.t.Servers()[0]
	if err := enableAOF(ctx, n); err != nil {
		return verdict{Fail, err.Error(), "AOF on"}
	}
	defer n.Do(context.WithoutCancel(ctx), "CONFIG", "SET", "appendonly", "no")
	k := e.key("aofdel")
	e.do(ctx, "SET", k, "t", "PX", "30000")
	got := e.do(ctx, "DELIFEQ", k, "t")
	if got != "1" {
		return expect(e.f[DELIFEQ], got, "1, written to the AOF as DEL", equals(""))
	}
	// The AOF holds RESP; the last command naming the key is what a
	// restart replays.
	aof, err := n.Exec(ctx, "sh", "-c", "cat /data/appendonlydir/*.incr.aof /data/appendonly.aof 2>/dev/null")
	if err != nil && aof == "" {
		return verdict{Fail, "read the AOF: " + err.Error(), "DEL " + k}
	}
	last := lastCommandOn(aof, k)
	return expect(e.f[DELIFEQ], "1; AOF: "+orNone(last), "1; AOF: DEL "+k, equals("1; AOF: DEL "+k))
}

// pair is the primary that holds key and one of its replicas.
func (e *env) pair(ctx context.Context, key string) (primary, replica *topology.Node, err error) {
	primary, err = e.t.Primary(ctx, key)
	if err != nil {
		return nil, nil, err
	}
	info, err := primary.Info(ctx, "replication")
	if err != nil {
		return nil, nil, err
	}
	for i := 0; ; i++ {
		s, ok := info[fmt.Sprintf("slave%d", i)]
		if !ok {
			break
		}
		// slave0:ip=10.213.4.11,port=6379,state=online,...
		var ip string
		for _, kv := range strings.Split(s, ",") {
			if v, ok := strings.CutPrefix(kv, "ip="); ok {
				ip = v
			}
		}
		for _, n := range e.t.Servers() {
			if n.IP.String() == ip {
				return primary, n, nil
			}
		}
	}
	return nil, nil, fmt.Errorf("%s reports no replica", primary.Name)
}

// pipeline runs commands on key's primary over one connection, as WAIT and
// WAITAOF need: they count acknowledgements of that connection's writes.
func (e *env) pipeline(ctx context.Context, key string, cmds ...[]string) []string {
	out := make([]string, len(cmds))
	n, err := e.t.Primary(ctx, key)
	if err != nil {
		for i := range out {
			out[i] = err.Error()
		}
		return out
	}
	c, err := n.Client()
	if err != nil {
		for i := range out {
			out[i] = err.Error()
		}
		return out
	}
	built := make(valkey.Commands, len(cmds))
	for i, args := range cmds {
		// Blocking commands go on a dedicated connection, all together.
		built[i] = c.B().Arbitrary(args...).Blocking()
	}
	for i, res := range c.DoMulti(ctx, built...) {
		out[i] = replyOrError(res)
	}
	return out
}

// awaitFed bounds the wait for a command the replica is expected to be fed:
// the wait ends when it comes, so only a replica that is never fed it waits
// this long, and a loaded machine's slow feed is not read as a missing one.
const awaitFed = 20 * time.Second

// blockTimeout is the timeout, in milliseconds, of a WAIT or WAITAOF that
// is expected to be satisfied: it returns as soon as it is, so a long bound
// costs nothing and keeps a slow fsync or replica ack on a loaded machine
// from reading as a missing one.
const blockTimeout = "10000"

// enableAOF turns AOF on at run time and waits for the rewrite that starts
// it: only then do WAITAOF and the AOF file reflect new writes. The rewrite
// forks, which a loaded machine may make slow, so it waits until ctx ends.
func enableAOF(ctx context.Context, n *topology.Node) error {
	if _, err := n.Do(ctx, "CONFIG", "SET", "appendfsync", "always", "appendonly", "yes"); err != nil {
		return err
	}
	start := time.Now()
	var last map[string]string
	for {
		info, err := n.Info(ctx, "persistence")
		if err == nil {
			last = info
			if info["aof_enabled"] == "1" && info["aof_rewrite_in_progress"] == "0" && info["aof_rewrite_scheduled"] == "0" {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("AOF rewrite still running after %s (aof_enabled %q, aof_rewrite_in_progress %q, aof_rewrite_scheduled %q)",
				time.Since(start).Round(time.Millisecond), last["aof_enabled"], last["aof_rewrite_in_progress"], last["aof_rewrite_scheduled"])
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// lastCommandOn finds the last command in RESP text (an AOF) whose first
// argument is key, as "CMD key ...".
func lastCommandOn(resp, key string) string {
	lines := strings.Split(strings.ReplaceAll(resp, "\r", ""), "\n")
	last := ""
	for i := 0; i < len(lines); i++ {
		if !strings.HasPrefix(lines[i], "*") {
			continue
		}
		var argc int
		fmt.Sscanf(lines[i], "*%d", &argc)
		var args []string
		for j := 0; j < argc && i+2 < len(lines); j++ {
			args = append(args, lines[i+2])
			i += 2
		}
		if len(args) > 1 && args[1] == key {
			last = strings.ToUpper(args[0]) + " " + strings.Join(args[1:], " ")
		}
	}
	return last
}
