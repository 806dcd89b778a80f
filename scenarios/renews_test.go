package scenarios

import (
	"testing"
	"time"

	"github.com/lockcheck/lockcheck/history"
	"github.com/lockcheck/lockcheck/scenarios/lockclient"
)

// TestRenewingClientsRecordNoLease: a client that renews its own holds
// (valkeylock) has its lock calls recorded without a lease, but an
// acquire it gave back before returning with the lease it was set with:
// that key was never renewed, and lives until the release or its expiry.
func TestRenewingClientsRecordNoLease(t *testing.T) {
	for _, c := range []struct {
		client       string
		call, undone int64
	}{
		{client: "valkeylock", call: 0, undone: 500},
		{client: "native", call: 500, undone: 500},
	} {
		rec := history.NewRecorder()
		wk := &worker{id: 1, cid: rec.NewClient(), cnt: &counters{},
			w: Workload{Recorder: rec}}
		wk.w.TTL, wk.w.Client = 500*time.Millisecond, c.client
		if got := wk.leaseOf(wk.w.TTL).Milliseconds(); got != c.call {
			t.Errorf("%s: a lock call is recorded with a %d ms lease, want %d", c.client, got, c.call)
		}
		r := lockclient.Result{Outcome: history.Fail, Token: "t1",
			Undo: &lockclient.Undo{Release: lockclient.Result{Outcome: history.OK}, Call: 10, Return: 11}}
		wk.recordUndo(lockOp(wk.cid, 1, history.Acquire, "k", "", wk.leaseOf(wk.w.TTL), r, 1, 12), r)
		ops := rec.History(history.Meta{}).Ops
		if len(ops) != 2 || ops[0].Kind != history.Acquire || ops[0].TTLms != c.undone || ops[1].Kind != history.Release {
			t.Errorf("%s: an acquire given back before it returned is recorded as %+v, want an acquire with a %d ms lease, then its release", c.client, ops, c.undone)
		}
	}
}
