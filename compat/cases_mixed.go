package compat

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/lockcheck/lockcheck/topology"
)

// MixedPair is a replicated topology half way through a rolling upgrade:
// the primary (and n2) on the newer build, the replica n1 on the older.
type MixedPair struct{ Primary, Replica string }

// MixedPairs are the mixed topologies compat observes: every Valkey build
// here that lacks a lock command under each newer one that has it.
var MixedPairs = []MixedPair{{"valkey-8.1", "valkey-8.0"}, {"valkey-9.1", "valkey-8.0"}, {"valkey-9.1", "valkey-8.1"}}

// MixedReplica is the node that runs the older build.
const MixedReplica = "n1"

// MixedTopology names a mixed pair's column.
func MixedTopology(replica string) string {
	return fmt.Sprintf("replicated, %s on %s", MixedReplica, replica)
}

// MixedOptions are the options of a mixed pair's topology, n1 on the
// older build's image.
func MixedOptions(replicaImage string) topology.Options {
	o := Options()
	o.NodeImages = map[string]string{MixedReplica: replicaImage}
	return o
}

// mixedCase is one command on the newer primary and what the older
// replica made of it.
type mixedCase struct {
	name string
	// setup and cmd run on the primary; cmd's reply is observed.
	setup, cmd []string
	// needs is what the primary needs to accept cmd, and what the
	// replica needs to apply it as fed (fed verbatim); fedAs says the
	// primary rewrites it into a form every build applies (PXAT, DEL).
	needs Feature
	fedAs string
	// want is the key's value on the primary after cmd ("" for none).
	want string
}

var mixedCases = []mixedCase{
	{name: "mixed/set-ifeq", setup: []string{"SET", "k", "a"}, cmd: []string{"SET", "k", "b", "IFEQ", "a"}, needs: IFEQ, want: "b"},
	{name: "mixed/set-ifeq-px", setup: []string{"SET", "k", "a"}, cmd: []string{"SET", "k", "b", "IFEQ", "a", "PX", "30000"}, needs: IFEQ, fedAs: "SET ... PXAT", want: "b"},
	{name: "mixed/set-ifeq-keepttl", setup: []string{"SET", "k", "a", "PX", "30000"}, cmd: []string{"SET", "k", "b", "IFEQ", "a", "KEEPTTL"}, needs: IFEQ, want: "b"},
	{name: "mixed/delifeq", setup: []string{"SET", "k", "a"}, cmd: []string{"DELIFEQ", "k", "a"}, needs: DELIFEQ, fedAs: "DEL", want: ""},
}

// MixedCases names the mixed cases, in the order they run.
func MixedCases() []string {
	var out []string
	for _, c := range mixedCases {
		out = append(out, c.name)
	}
	return out
}

// ObserveMixed runs the mixed cases on a replicated topology whose n1
// runs replicaBuild: each command on the primary, its reply, the value
// the older replica then holds beside the primary's, and the replica's
// link. It judges each against the expectation table: a command fed
// verbatim that the replica's build lacks leaves the replica on the old
// value (it refuses what its primary sends, and the link stays up).
func ObserveMixed(ctx context.Context, t *topology.Topology, replicaBuild string, progress io.Writer) ([]Cell, error) {
	primary, replica := t.Node("n0"), t.Node(MixedReplica)
	if primary == nil || replica == nil || t.Kind != topology.Replicated {
		return nil, fmt.Errorf("mixed checks run on a replicated topology with n0 and %s", MixedReplica)
	}
	rv, err := replica.Version(ctx)
	if err != nil {
		return nil, err
	}
	pf, rf := Expected(t.Build.Name), Expected(replicaBuild)
	var cells []Cell
	for _, mc := range mixedCases {
		cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		v := mc.run(cctx, primary, replica, rv, pf, rf)
		cancel()
		if ctx.Err() != nil {
			return cells, ctx.Err()
		}
		cell := Cell{Server: t.Build.Name, Version: t.Version, Topology: MixedTopology(replicaBuild), Case: mc.name,
			Outcome: v.outcome, Observed: oneLine(v.observed), Expected: v.expected}
		cells = append(cells, cell)
		if progress != nil {
			fmt.Fprintf(progress, "  %-36s %-11s %s\n", mc.name, cell.Outcome, cell.Observed)
		}
	}
	return cells, nil
}

func (mc mixedCase) run(ctx context.Context, primary, replica *topology.Node, replicaVersion string, pf, rf Features) verdict {
	k := "lock:{mixed-" + mc.name[len("mixed/"):] + "}"
	args := func(a []string) []string {
		out := append([]string(nil), a...)
		out[1] = k
		return out
	}
	nodeDo(ctx, primary, "DEL", k)
	if got := nodeDo(ctx, primary, args(mc.setup)...); got != "OK" {
		return verdict{Fail, "setup " + fmt.Sprint(mc.setup) + ": " + got, "OK"}
	}
	reply := nodeDo(ctx, primary, args(mc.cmd)...)
	// every replica acknowledges the offset, applied or refused
	acks := nodeDo(ctx, primary, "WAIT", "2", "2000")
	pv, rvv := value(ctx, primary, k), value(ctx, replica, k)
	link := "unknown"
	if info, err := replica.Info(ctx, "replication"); err == nil {
		link = info["master_link_status"]
	}
	obs := fmt.Sprintf("primary replied %s (WAIT 2: %s); primary's value %s, %s (%s)'s value %s; %s's link %s", reply, acks, pv, replica.Name, replicaVersion, rvv, replica.Name, link)
	want := mc.expect(pf, rf)
	ok := func() bool {
		if !pf[mc.needs] {
			return isRefusal(reply) && rvv == pv && link == "up"
		}
		keeps := mc.fedAs == "" && !rf[mc.needs]
		return !isRefusal(reply) && pv == orNil(mc.want) && link == "up" &&
			(keeps && rvv == "a" || !keeps && rvv == pv)
	}()
	if ok {
		return verdict{Pass, obs, want}
	}
	return verdict{Fail, obs, want}
}

// expect says in words what the pair should show.
func (mc mixedCase) expect(pf, rf Features) string {
	switch {
	case !pf[mc.needs]:
		return "the primary refuses it; both keep the value"
	case mc.fedAs != "":
		return fmt.Sprintf("fed as %s: the replica applies it (value %s on both), link up", mc.fedAs, orNil(mc.want))
	case !rf[mc.needs]:
		return "fed verbatim, which the older replica cannot parse: it keeps the old value a while the primary has b, link up (diverged)"
	}
	return fmt.Sprintf("fed verbatim and applied: value %s on both, link up", orNil(mc.want))
}

func orNil(s string) string {
	if s == "" {
		return topology.Nil
	}
	return s
}

// value reads k on node n (GET, which a replica serves).
func value(ctx context.Context, n *topology.Node, k string) string { return nodeDo(ctx, n, "GET", k) }
