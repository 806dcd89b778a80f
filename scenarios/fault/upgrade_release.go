package fault

import (
	"context"
	"time"

	"github.com/lockcheck/lockcheck/history"
)

// awaitRelease holds an upgrade step's window until a release has
// returned in it (one that returned at or after from), at most bound,
// and says whether one did. A step's row says what its servers did to
// the client's releases (refused them, where a primary lacks DELIFEQ);
// a hold of two leases usually sees several, but a workload whose
// workers all stall or hold late can let one pass without any, and the
// row would then say "nothing refused" of servers that would have.
func (u *upgrader) awaitRelease(ctx context.Context, from int64, bound time.Duration) bool {
	_, ok := awaitRecorded(ctx, u.env.Rec, 0, bound, func(op history.Op) bool {
		return op.Kind == history.Release && op.Return >= from
	})
	return ok
}
