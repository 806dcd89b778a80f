package checker

import (
	"context"
	"fmt"

	"github.com/lockcheck/lockcheck/history"
)

// Names of the checks, each named after the guarantee it tests. Their order
// in a Result is their order in checkTable.
const (
	// DoubleHolder: two workers believe at once that they hold one key. A
	// worker believes from an OK acquire, and from an OK extend even after
	// its lease had ended, until its release, a failed extend or its lease
	// end; beliefs are told apart by worker, whatever the tokens say, so a
	// token shared by two acquisitions does not hide two holders.
	DoubleHolder = "double_holder"
	// Fence: the resource accepted a write with a fence not above one it
	// accepted before, or a write from a holder whose fence was stale (a
	// higher fence had been handed out before the write), or one fence was
	// handed to two holders with no fault between them.
	Fence = "fence"
	// Resource: an unfenced counter lost an increment (the visible effect
	// of a double holder on an unfenced client).
	Resource = "resource"
	// Linearizability: porcupine finds no legal order for the lock and the
	// fence-counter operations of a key under a model in which a lease may
	// end from its TTL on and, during faults, the key may be lost.
	Linearizability = "linearizability"
	// TTL: a lock key left without expiry, a key nobody could take again
	// long after every lease on it ended, or a lease nobody asked for (an
	// observation right after an acquire or extend that finds the holder's
	// token with more or less time left than that command can have set).
	TTL = "ttl"
	// Rejected: a lock command the server refused as one it does not
	// understand (the build lacks it, or the client sends it wrong); other
	// error replies are listed, allowed.
	Rejected = "rejected"
	// LostLocks (informational): a nil extend or a 0 release, and a fence
	// handed out twice because a fault rolled the counter back.
	LostLocks = "lost_locks"
)

// checkTable is every check, in the order a Result lists them (CheckNames).
// The checker reads a check only through its row: what runs on each key,
// what its summary counts, when it has nothing to judge, and which finding
// kinds it makes. A check is its function and its row (doc.go says how to
// add one).
var checkTable = []checkRow{
	{name: DoubleHolder, noun: "double holders", perKey: checkDoubleHolders,
		kinds: []kindRow{{KindDoubleHolder, explainDoubleHolder}}},
	{name: Fence, noun: "fence violations", perKey: checkFences,
		needs: withFence, idle: "no fenced operations in the history",
		kinds: []kindRow{{KindFenceNotIncreasing, explainFenceNotIncreasing}, {KindWriteOverHolder, explainWriteOverHolder},
			{KindStaleWrite, explainStaleWrite}, {KindDuplicateFence, explainDuplicateFence}}},
	{name: Resource, noun: "lost increments", perKey: checkCounter,
		needs: counterWrite, idle: "no unfenced counter writes in the history",
		kinds: []kindRow{{KindLostIncrement, explainLostIncrement}}},
	{name: Linearizability, acrossKeys: checkLinearizability, decide: linearizabilityCheck,
		kinds: []kindRow{{KindIllegalLock, explainIllegal}, {KindIllegalFence, explainIllegal},
			{KindTimeout, explainUndecided}, {KindUndecided, explainUndecided}}},
	{name: TTL, noun: "leases wrong (no expiry, stuck, not as asked, granted late)", perKey: checkLeases,
		kinds: []kindRow{{KindNoExpiry, explainNoExpiry}, {KindWrongLease, explainWrongLease},
			{KindLateGrant, explainLateGrant}, {KindStuck, explainStuck}}},
	{name: Rejected, noun: "lock commands rejected with an error", perKey: checkRejected,
		kinds: []kindRow{{KindRejected, explainRejected}}},
	{name: LostLocks, noun: "lost-lock incidents", perKey: checkLostLocks,
		kinds: []kindRow{{KindLostLock, explainLostLock}}},
}

// checkRow is one check.
type checkRow struct {
	// name is the check's key in a Result (and in Options.Skip).
	name string
	// noun is what the check counts, as its summary line says it: "no
	// double holders", "3 double holders (1 allowed)".
	noun string
	// needs, when set, picks the operations the check judges. A history
	// with none of them is skipped with idle as its summary: passing it
	// would claim a guarantee nothing tested.
	needs func(op *history.Op) bool
	idle  string
	// perKey finds the check's findings on one key, into out. It runs on
	// every key (on each chunk of a long key in turn, so what it keeps
	// between chunks goes in x.cc.carry), once the key's holds are known,
	// in table order. A finding that is another check's goes to x.to.
	perKey func(x *keyCheck, out *findings)
	// acrossKeys is for a check that judges a part's keys together (one
	// search over every key's segments); it runs after every perKey.
	acrossKeys func(x *partCheck, p *part, out *findings)
	// decide, when set, turns the merged findings into the check's
	// outcome, for a check whose status says more than its count of
	// findings (segments undecided); else they are counted under noun.
	decide func(p *part, out *findings, opts Options) Check
	// kinds are the finding kinds the check makes, with how each is
	// explained (Explain). A kind belongs to one row, even when some of
	// its findings are listed under another check (an allowed duplicate
	// fence is a lost-lock incident).
	kinds []kindRow
}

// partCheck is what every check reads of the part of a history it checks.
type partCheck struct {
	ctx  context.Context
	h    *history.History
	opts Options
	// end is the whole history's last instant; byClient: holders are
	// told apart by client id (the history names no workers).
	end      int64
	byClient bool
	tol      int64
	// loss: where a key may lose or roll back its state; counterLoss: its
	// fence counter; clockLoss: where a clock fault may stretch a lease.
	loss, counterLoss, clockLoss lossWindows
	faults                       faultIndex
	// keys are the part's keys; segs their segments, once every key's
	// checks ran (for a check across keys).
	keys []*keyOps
	segs []segment
}

func newPartCheck(ctx context.Context, h *history.History, opts Options, sum summary, keys []*keyOps) *partCheck {
	end := sum.end
	return &partCheck{ctx: ctx, h: h, opts: opts, end: end, byClient: !sum.workers, tol: int64(opts.ClockTolerance),
		loss: newLossWindows(h, end, opts), counterLoss: newCounterLoss(h, end, opts),
		clockLoss: lossWindowsOf(h, end, opts, clockFault), faults: newFaultIndex(h, end), keys: keys}
}

// keyCheck is what a per-key check reads of its key.
type keyCheck struct {
	*partCheck
	k *keyOps
	// holds are the key's hold intervals (holdsOf).
	holds []Hold
	// cc carries what a check keeps from one chunk of the key to the next.
	cc    *chunkCtx
	found byCheck
	// chunk is what cc points to, and own the carry of a key checked
	// whole: kept here, they cost no allocation per key.
	chunk chunkCtx
	own   keyCarry
}

// to is the findings of the check called name: where a check puts a
// finding that is another's (an allowed fence finding is a lost-lock
// incident).
func (x *keyCheck) to(name string) *findings { return &x.found[idOf(name)] }

// kindRow is a finding kind and its explanation.
type kindRow struct {
	kind    FindingKind
	explain explainer
}

// CheckNames lists every check a Result carries, in its order.
var CheckNames = namesOf(checkTable)

func namesOf(rows []checkRow) []string {
	out := make([]string, len(rows))
	for i := range rows {
		out[i] = rows[i].name
	}
	return out
}

// checkID is a check's row in checkTable, and where its findings are in a
// byCheck.
type checkID int

// checkIDs finds a check's row by name, and needy are the checks that
// have needs, all of them set in needyAll. init fills them: as
// initializers they would make the table depend on itself, through the
// functions in it that look a check up.
var (
	checkIDs map[string]checkID
	needy    []checkID
	needyAll uint64
)

func init() {
	if len(checkTable) > 64 {
		panic("checker: more checks than summary.has has bits")
	}
	checkIDs = make(map[string]checkID, len(checkTable))
	for i := range checkTable {
		r := &checkTable[i]
		if _, dup := checkIDs[r.name]; dup {
			panic(fmt.Sprintf("checker: check %q has two rows", r.name))
		}
		if (r.perKey == nil) == (r.acrossKeys == nil) || (r.decide == nil && r.noun == "") || (r.needs != nil && r.idle == "") {
			panic(fmt.Sprintf("checker: check %q: a row needs one of perKey and acrossKeys, a noun or decide, and idle with needs", r.name))
		}
		checkIDs[r.name] = checkID(i)
		if r.needs != nil {
			needy = append(needy, checkID(i))
			needyAll |= 1 << i
		}
	}
}

// idOf is the row of the check called name.
func idOf(name string) checkID {
	id, ok := checkIDs[name]
	if !ok {
		panic("checker: no check " + name)
	}
	return id
}

// byCheck holds one findings per check, by checkID.
type byCheck []findings

// newByCheck is an empty byCheck on the given backing (nil: its own)
// that lists up to max findings per check.
func newByCheck(backing []findings, max int) byCheck {
	if backing == nil {
		backing = make([]findings, len(checkTable))
	}
	b := byCheck(backing[:len(checkTable):len(checkTable)])
	for i := range b {
		b[i].max = max
	}
	return b
}

// merge adds c's findings to b's, check by check.
func (b byCheck) merge(c byCheck) {
	for i := range b {
		b[i].merge(&c[i])
	}
}

// explainersOf gathers the explainers of every row's kinds.
func explainersOf(rows []checkRow) map[FindingKind]explainer {
	out := map[FindingKind]explainer{}
	for _, r := range rows {
		for _, k := range r.kinds {
			if _, dup := out[k.kind]; dup {
				panic(fmt.Sprintf("checker: finding kind %q is in two rows", k.kind))
			}
			out[k.kind] = k.explain
		}
	}
	return out
}
