package history

// Observe is a read of the lock key by the scenario itself, not by a lock
// client: PTTL (and optionally GET) on the key. Read carries the PTTL reply
// in milliseconds (-2: no key, -1: a key without expiry, >= 0: time left),
// Token the value GET returned when the scenario read it, Outcome OK when
// the server answered. The checker uses it to see a lock left without expiry
// and as one more read of the lock's state; lock clients never record it.
const Observe Kind = "observe"
