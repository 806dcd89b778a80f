package checker

import (
	"fmt"
	"strings"

	"github.com/lockcheck/lockcheck/history"
)

// incompatible are the parts of error replies that say the server does not
// understand the lock command as sent: the build lacks it (DELIFEQ on a
// promoted 8.x node), or the client sends it wrong. No fault explains them,
// and a lock whose release is refused this way is held until its TTL runs
// out on every release: a run that shows one is not safe. (EXECABORT is not
// among them: a transaction queued on a node that just became a replica
// gets it too.)
var incompatible = []string{
	"unknown command",
	"unknown subcommand",
	"syntax error",
	"wrong number of arguments",
	"WRONGTYPE",
	"Could not find scripting engine",
}

// isIncompatible says whether an error reply is one of incompatible.
func isIncompatible(reply string) bool {
	for _, s := range incompatible {
		if strings.Contains(reply, s) {
			return true
		}
	}
	return false
}

// checkRejected is the rejected check on one key.
func checkRejected(x *keyCheck, out *findings) { rejectedCommands(x.h, x.k, x.faults, out) }

// rejectedCommands lists lock operations that failed with an error reply.
// The server refusing a command it does not know (or one sent malformed)
// fails the check; other errors (READONLY, LOADING, CLUSTERDOWN and the
// like during a fault, or whatever an adapter reports) are listed, allowed:
// the command may simply have hit the wrong moment.
func rejectedCommands(h *history.History, k *keyOps, faults faultIndex, out *findings) {
	for _, i := range k.ops {
		op := &h.Ops[i]
		if op.Outcome != history.Fail || op.Error == "" {
			continue
		}
		switch op.Kind {
		case history.Acquire, history.Extend, history.Release:
		default:
			continue
		}
		bad := isIncompatible(op.Error)
		why := "an error reply"
		if bad {
			why = "a command the server does not understand"
		}
		out.add(Finding{Kind: KindRejected, Key: k.name, Summary: fmt.Sprintf("%s: worker %d's %s got %s: %s", k.name, op.Worker, op.Kind, why, op.Error),
			Start: op.Call, End: op.Return, Ops: []OpRef{{Index: int(i), Op: *op}}, Faults: faults.during(op.Call, op.Return), Allowed: !bad})
	}
}
