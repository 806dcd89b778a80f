// Package checker turns a recorded history into verdicts. Every check is a
// pure function of the history: no servers, no network, so each one is
// testable on hand-built histories and a saved run can be checked again
// offline.
//
// The checks are the rows of checkTable (checks.go), in the order a Result
// lists them (CheckNames): double_holder, fence, resource,
// linearizability, ttl, rejected and lost_locks. The doc of each one's
// name (DoubleHolder, Fence, ...) says what fails it.
//
// Besides the checks, every result carries the time to notice (Notices,
// notice.go): how long a holder went on after losing its lock before a
// reply told it. It fails nothing.
//
// Long histories are cut per key into segments at instants where the lock is
// known to be free and no operation is open; each segment is checked on its
// own, first by a linear greedy search for a witness order and, only when that
// fails, by porcupine's exhaustive search.
//
// # What a history must say
//
// The checker reads history.Op as follows; scenarios must record it so.
//   - Key is the lock key, also on Write operations: a write goes to the
//     resource that key protects.
//   - Worker is the logical worker and must be set (from 1, or any ids):
//     holds are told apart by worker, since an unknown outcome gives a worker
//     a new Client. A history with every Worker 0 falls back to Client.
//   - Token is the value the acquire stored; extends and releases name it
//     (when empty, the worker's last acquire's token is assumed).
//   - TTLms is the PX the command sent, on every acquire and extend; 0 means
//     the command set no expiry (SET without PX), which the ttl check reports.
//   - Outcome OK: it took effect. Fail with no Error: the server said no (NX
//     found a key; IFEQ or DELIFEQ found another value or none). Fail with an
//     Error: certainly not done (an error reply); it is ignored by the
//     models. Unknown: may or may not have taken effect, at any time after
//     Call (porcupine's return at infinity); Return is when the harness gave
//     up, which only the TTL check and segment cuts use, as the likely
//     latest moment it took effect.
//   - An acquire reports Fence and HasFence only when OK; a fenced Write
//     carries the holder's fence, Outcome OK if the resource accepted it and
//     Fail if it rejected it. An unfenced Write carries Read and Wrote of the
//     resource counter.
//   - history.Observe is the scenario's own PTTL (and GET) on the key: Read
//     is the PTTL reply in ms (-2 no key, -1 no expiry, else the time left),
//     Token the value GET returned if the scenario read it, Outcome OK when
//     the server answered.
//   - Fault windows name the fault; by default (LossDuringFaults) a key may
//     lose or roll back its state in any fault window and FaultGrace after it.
//
// # Adding a check
//
// A check is one file and one row of checkTable: nothing else lists the
// checks, so its findings, its place in a Result, Options.Skip and the
// explanations of its findings all follow from the row. Say a lease longer
// than a minute were a finding:
//
// First a file, leasecap.go, with the check's name, its finding kind, the
// function that finds it on one key, and the explanation of a finding:
//
//	// LeaseCap: an acquire or extend asked for a lease over a minute.
//	const LeaseCap = "lease_cap"
//
//	// KindLongLease: an acquire or extend that asked for over a minute.
//	const KindLongLease FindingKind = "long_lease"
//
//	// checkLeaseCap is the lease_cap check on one key.
//	func checkLeaseCap(x *keyCheck, out *findings) {
//		for _, i := range x.k.ops {
//			op := &x.h.Ops[i]
//			if op.TTLms > 60_000 {
//				out.add(Finding{Kind: KindLongLease, Key: x.k.name, Start: op.Call, End: op.Return,
//					Summary: fmt.Sprintf("%s: worker %d asked for %d ms", x.k.name, op.Worker, op.TTLms),
//					Ops: []OpRef{{Index: int(i), Op: *op}}, Faults: x.faults.during(op.Call, op.Return)})
//			}
//		}
//	}
//
//	func explainLongLease(f *Finding, c explainCtx) string {
//		return upper(did(&f.Ops[0].Op)) + ", asking for a lease over a minute."
//	}
//
// Then its row in checkTable, at the place it is to have among a Result's
// checks:
//
//	{name: LeaseCap, noun: "leases over a minute", perKey: checkLeaseCap,
//		kinds: []kindRow{{KindLongLease, explainLongLease}}},
//
// A finding fails its check unless it is Allowed; the summary counts
// findings under noun ("no leases over a minute", "2 leases over a
// minute"). A row may also name the operations its check judges (needs)
// and its summary when a history has none (idle): it is then skipped,
// not passed, as the fence check is without fenced operations. A finding
// that is another check's goes to x.to(name). A check that judges a
// part's keys together sets acrossKeys instead of perKey, and decide when
// its status says more than its count (linearizability). What a check
// remembers from one chunk of a long key to the next goes in the key's
// carry (x.cc.carry, carry.go).
//
// Its tests: a case for each new kind in TestExplainEveryKind, and a saved
// history in testdata/histories that it fails. docs/checks.md gives users
// a row per check.
package checker
