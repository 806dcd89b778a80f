package checker

// FindingKind names what one finding is. Reports match on these
// constants, never on strings of their own. The built-in checks' kinds are
// declared below; a check added later may declare its own beside its
// function. Either way, the check's row in checkTable names each of its
// kinds with its explanation, so the table reaches every kind.
type FindingKind string

const (
	// KindDoubleHolder: two workers' beliefs overlap (Holds, OverlapMs).
	KindDoubleHolder FindingKind = "double_holder"
	// KindFenceNotIncreasing: the resource accepted a fence not above one
	// it had accepted (Ops: the earlier write and the offending one).
	KindFenceNotIncreasing FindingKind = "fence_not_increasing"
	// KindWriteOverHolder: a write accepted from one worker, with a bigger
	// fence than the worker holding the lock through the whole write.
	KindWriteOverHolder FindingKind = "write_over_holder"
	// KindStaleWrite: a stale holder's write accepted before the newer
	// holder wrote (allowed: no fenced resource can know better).
	KindStaleWrite FindingKind = "stale_write"
	// KindDuplicateFence: one fence handed to two holders; allowed after a
	// fault that may roll the counter back.
	KindDuplicateFence FindingKind = "duplicate_fence"
	// KindLostIncrement: the unfenced resource lost an increment.
	KindLostIncrement FindingKind = "lost_increment"
	// KindIllegalLock and KindIllegalFence: a segment of a key's lock or
	// fence-counter operations with no legal order.
	KindIllegalLock  FindingKind = "illegal_lock"
	KindIllegalFence FindingKind = "illegal_fence"
	// KindTimeout and KindUndecided: porcupine could not decide a segment
	// within its budget, or was cancelled (Ops: the segment's first).
	KindTimeout   FindingKind = "timeout"
	KindUndecided FindingKind = "undecided"
	// KindNoExpiry: an acquire or extend without PX, or PTTL -1 observed.
	KindNoExpiry FindingKind = "no_expiry"
	// KindWrongLease: the key held a holder's token with a lease its last
	// acquire or extend did not ask for (Ops: that command and the
	// observation).
	KindWrongLease FindingKind = "wrong_lease"
	// KindLateGrant: a Redlock client said OK to an acquire or extend
	// after the lease it asked for had ended (Options.Majority): the
	// validity check that the algorithm puts between the nodes' answers
	// and the caller was skipped or wrong.
	KindLateGrant FindingKind = "late_grant"
	// KindStuck: the key stayed taken long after every lease could end.
	KindStuck FindingKind = "stuck"
	// KindLostLock: a nil extend or a 0 release.
	KindLostLock FindingKind = "lost_lock"
	// KindRejected: a lock command refused as one the server does not
	// understand, or another error reply (allowed).
	KindRejected FindingKind = "rejected"
)
