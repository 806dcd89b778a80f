package checker

import (
	"fmt"

	"github.com/lockcheck/lockcheck/history"
)

// checkLostLocks is the lost-lock check on one key; the fence check adds
// its own allowed findings (checkFences).
func checkLostLocks(x *keyCheck, out *findings) { lostLocks(x.h, x.k, x.faults, out) }

// lostLocks lists the incidents the article says to log: a nil extend or a
// 0 release means the lease ran out (or a failover lost it) while the
// client believed it held the lock. They are informational: a correct lock
// loses leases when a client is slower than its TTL. (The fence check adds
// the fences a failover handed out twice.)
func lostLocks(h *history.History, k *keyOps, faults faultIndex, out *findings) {
	for _, i := range k.ops {
		op := &h.Ops[i]
		if op.Outcome != history.Fail || op.Error != "" {
			continue
		}
		var what string
		switch op.Kind {
		case history.Extend:
			what = "extend returned nil"
		case history.Release:
			what = "release returned 0"
		default:
			continue
		}
		out.add(Finding{Kind: KindLostLock, Key: k.name, Summary: fmt.Sprintf("%s: worker %d lost the lock: %s", k.name, op.Worker, what),
			Start: op.Call, End: op.Return, Ops: []OpRef{{Index: int(i), Op: *op}}, Faults: faults.during(op.Call, op.Return), Allowed: true})
	}
}
