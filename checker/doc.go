// Package checker turns a recorded history into verdicts. Every check is a
// pure function of the history: no servers, no network, so each one is
// testable on hand-built histories and a saved run can be checked again
// offline.
//
// The checks, each named after the guarantee it tests:
//   - double_holder: two workers believe at once that they hold one key. A
//     worker believes from an OK acquire, and from an OK extend even after
//     its lease had ended, until its release, a failed extend or its lease
//     end; beliefs are told apart by worker, whatever the tokens say, so a
//     token shared by two acquisitions does not hide two holders;
//   - fence: the resource accepted a write with a fence not above one it
//     accepted before, or a write from a holder whose fence was stale (a
//     higher fence had been handed out before the write), or one fence was
//     handed to two holders with no fault between them;
//   - resource: an unfenced counter lost an increment (the visible effect of
//     a double holder on an unfenced client);
//   - linearizability: porcupine finds no legal order for the lock and the
//     fence-counter operations of a key under a model in which a lease may
//     end from its TTL on and, during faults, the key may be lost;
//   - ttl: a lock key left without expiry, a key nobody could take again
//     long after every lease on it ended, or a lease nobody asked for (an
//     observation right after an acquire or extend that finds the holder's
//     token with more or less time left than that command can have set);
//   - lost_locks (informational): a nil extend or a 0 release, and a fence
//     handed out twice because a fault rolled the counter back.
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
package checker
