package scenarios

import (
	"fmt"
	"strings"
	"time"
)

// MutantCase is one mutant's randomized scenario, kept as data so that how
// often it is caught can be measured over many seeds (lockcheck
// catch-rate) instead of asserted on one seed: a random workload exposes a
// bug only when the timing cooperates, so a single run proves little and a
// spec built on one goes red on the next machine. The scripted specs in
// the safety suite are what gate; this is the measurement beside them.
//
// The mutant runs the scenario, and so does its Control, a correct client
// that must not fail the Breaks check in it: a scenario that fails every
// client says nothing about the mutant.
type MutantCase struct {
	// Client is the mutant's kind (see Kinds).
	Client string
	// Breaks names the check its bug breaks, as the checker names it
	// ("linearizability", "ttl", "double_holder", "fence"). It is a string
	// because scenarios does not depend on the checker.
	Breaks string
	// Why is the bug in one line.
	Why string
	// Control is the correct client run in the same scenario.
	Control string
	// Scenario is the run's scenario; its Client and Seed are set per run,
	// and the topology is catch-rate's (a standalone server).
	Scenario Scenario
}

// MutantCases lists every mutant's randomized scenario. Each is tuned so
// that one run of about a dozen seconds exposes the bug on (nearly) every
// seed: the moment the bug needs is made frequent rather than waited for,
// and happens on several keys at once where it can.
func MutantCases() []MutantCase {
	return []MutantCase{
		staleReleaseCase("mutant-del", "a plain DEL releases another client's lock after the first one's TTL ran out"),
		{
			// Every hold extends at least once (work past TTL/3) and a third
			// are abandoned: the first abandon after an extend leaves a key
			// that never expires, and the others' acquires find it held
			// long after every lease on it ended.
			Client: "mutant-extend-nopx", Breaks: "ttl", Control: "native",
			Why: "an extend without PX leaves the lock without expiry",
			Scenario: Scenario{
				TrafficSettings: TrafficSettings{Clients: 4, Keys: 1, TTL: time.Second, Duration: 12 * time.Second, AbandonRate: 0.3, StallRate: 0.1, PauseRate: 0.1, WorkMin: 600 * time.Millisecond, WorkMax: 900 * time.Millisecond},
			},
		},
		{
			// Every hold works past the TTL, so its lease ends under it
			// whatever it extends, and three other clients wait to take
			// the key as soon as it expires.
			Client: "mutant-extend-keepttl", Breaks: "double_holder", Control: "native",
			Why: "a KEEPTTL extend does not move the deadline, so long work outlives the lease",
			Scenario: Scenario{
				TrafficSettings: TrafficSettings{Clients: 4, Keys: 1, TTL: time.Second, Duration: 12 * time.Second, PauseRate: 0.1, WorkMin: 1500 * time.Millisecond, WorkMax: 3 * time.Second},
			},
		},
		{
			// The quiet SET NX happens only when a holder extends after a
			// stall that outlasted its lease, while the key is free. So
			// every hold stalls once (StallRate 1), holds are long (4-6
			// TTL) so that the stall usually comes early enough for an
			// extend to follow it, and there are four keys per worker, so
			// the key is almost always free when the staller wakes. Six
			// workers give a dozen such moments in a run.
			Client: "mutant-reacquire", Breaks: "linearizability", Control: "native",
			Why: "a quiet re-acquire after a nil extend reports an extend of a lease that had ended",
			Scenario: Scenario{
				TrafficSettings: TrafficSettings{Clients: 6, Keys: 24, TTL: time.Second, Duration: 15 * time.Second, StallRate: 1, PauseRate: 0.1, WorkMin: 4 * time.Second, WorkMax: 6 * time.Second},
			},
		},
		{
			// The mutant's SET expires during its pause between SET and
			// INCR; a client that does not pause takes the lock right
			// after (backoff of a few milliseconds), draws its fence, and
			// must still hold when the mutant, waking with the bigger
			// fence, writes. So: a pause only just longer than the TTL,
			// work within one step (TTL/3, so the holder's one write comes
			// at the end of its work and no extend tells it of its loss),
			// and three workers on each of four keys, where the race runs
			// in parallel.
			Client: "mutant-fence-outside", Breaks: "fence", Control: "fenced",
			Why: "the fence is drawn with an INCR after the SET, so a holder paused between the two writes with a bigger fence than the client that took over",
			Scenario: Scenario{
				ClientSettings: ClientSettings{
					// The pause is inside the acquire call: its deadline must
					// outlast it, or the pause is cut at the default 1 s.
					FenceGap: 1050 * time.Millisecond, FenceGapRandom: true, CallTimeout: 3 * time.Second},
				TrafficSettings: TrafficSettings{Clients: 12, Keys: 4, TTL: time.Second, Duration: 12 * time.Second, PauseRate: 0.1, WorkMin: 50 * time.Millisecond, WorkMax: 330 * time.Millisecond, BackoffMin: 2 * time.Millisecond, BackoffMax: 20 * time.Millisecond},
			},
		},
		{
			// A third of the frozen holds stop inside the acquire, between
			// SET NX and PEXPIRE, for 1.2-2 TTL; the observer reads the
			// key every TTL/4 and finds it without expiry.
			Client: "mutant-setnx-expire", Breaks: "ttl", Control: "native",
			Why: "the acquire is SET NX, then PEXPIRE: frozen between the two, the lock has no expiry",
			Scenario: Scenario{
				TrafficSettings: TrafficSettings{Clients: 4, Keys: 1, TTL: time.Second, Duration: 12 * time.Second, PauseRate: 1, WorkMin: 50 * time.Millisecond, WorkMax: 300 * time.Millisecond},
			},
		},
		{
			// One-step holds, so that every frozen hold that is not frozen
			// in its acquire stops inside its release, between GET and
			// DEL, past its lease; one of three others takes the key
			// meanwhile and the DEL removes its lock: its next extend or
			// the observer finds the key gone while its lease cannot have
			// ended.
			Client: "mutant-release-get-del", Breaks: "linearizability", Control: "native",
			Why: "the release is GET, compare, then DEL: frozen between them, it deletes the next holder's lock",
			Scenario: Scenario{
				TrafficSettings: TrafficSettings{Clients: 4, Keys: 1, TTL: time.Second, Duration: 12 * time.Second, PauseRate: 1, WorkMin: 50 * time.Millisecond, WorkMax: 300 * time.Millisecond},
			},
		},
		{
			// Latency on the primary's client links (5 s, from 3-5.5 s
			// in) makes round trips about as long as the call timeout (1
			// s), so half the calls time out; four clients on one key
			// make most timed-out acquires ones that found the key held.
			// The lease is three call timeouts: the mutant believes it
			// holds from its timeout to the lease's end, while another
			// does (with a lease of one call timeout the belief would end
			// as it starts, and only its late writes would show, as lost
			// increments).
			Client: "mutant-timeout-held", Breaks: "double_holder", Control: "native",
			Why: "an acquire that got no reply in time is taken for one that succeeded, while another client holds the lock",
			Scenario: Scenario{
				FaultSettings:   FaultSettings{Faults: []string{"latency"}},
				TrafficSettings: TrafficSettings{Clients: 4, Keys: 1, TTL: 3 * time.Second, Duration: 12 * time.Second, WorkMin: 50 * time.Millisecond, WorkMax: 300 * time.Millisecond},
			},
		},
		staleReleaseCase("mutant-release-fallback-del",
			"a release that finds the lock gone (DELIFEQ answers 0) deletes the key with a plain DEL: the next holder's lock"),
		staleReleaseCase("mutant-release-ignores-reply",
			"the release reads DELIFEQ's 0 as success: a lock lost under its holder is reported released"),
		{
			// Long holds, every one frozen once: a freeze inside an extend
			// falls between its GET and its PEXPIRE, past the lease, while
			// one of three others takes the key.
			Client: "mutant-extend-get-pexpire", Breaks: "linearizability", Control: "native",
			Why: "the extend is GET, compare, then PEXPIRE: frozen between them past its lease, it extends the next holder's lock",
			Scenario: Scenario{
				TrafficSettings: TrafficSettings{Clients: 4, Keys: 1, TTL: time.Second, Duration: 12 * time.Second, PauseRate: 1, WorkMin: 1500 * time.Millisecond, WorkMax: 2 * time.Second},
			},
		},
		stalledExtendCase("mutant-extend-overwrite", "linearizability",
			"the extend writes the lock again (SET key token PX) without comparing: after its lease ended it takes the key from the next holder"),
		stalledExtendCase("mutant-extend-blind", "linearizability",
			"the extend is a PEXPIRE that never compares the value: after its lease ended it extends the next holder's lock"),
		stalledExtendCase("mutant-extend-ignores-reply", "linearizability",
			"the extend reads a nil reply as success: the client goes on believing it holds a lock it lost"),
		stalledExtendCase("mutant-shared-token", "double_holder",
			"every acquisition stores the same value, so a stalled holder's extend succeeds on the next holder's lock"),
	}
}

// staleReleaseCase is the scenario of a release that comes after its
// lease ended: the stalled holder wakes 0.2-1 TTL after its lease ended
// and releases while the next holder (one of three others retrying every
// TTL/4 at most) holds the key.
func staleReleaseCase(client, why string) MutantCase {
	return MutantCase{Client: client, Breaks: "linearizability", Control: "native", Why: why,
		Scenario: Scenario{
			TrafficSettings: TrafficSettings{Clients: 4, Keys: 1, TTL: time.Second, Duration: 12 * time.Second, StallRate: 0.5, PauseRate: 0.1, WorkMin: 50 * time.Millisecond, WorkMax: 300 * time.Millisecond},
		},
	}
}

// stalledExtendCase is the scenario of an extend that comes after its
// lease ended while another client holds the key: every hold stalls, holds
// last 4-6 extend periods so that most stalls (mid-work or before an
// extend, not in the last step) are followed by an extend and the next
// holder still holds when it comes, and three other clients per key wait
// to take it as it expires, on three keys at once. (Four clients on one
// key with 0.7-1 s holds missed in 2 of 20 runs: too few such moments.)
func stalledExtendCase(client, breaks, why string) MutantCase {
	return MutantCase{Client: client, Breaks: breaks, Control: "native", Why: why,
		Scenario: Scenario{
			TrafficSettings: TrafficSettings{Clients: 12, Keys: 3, TTL: time.Second, Duration: 12 * time.Second, StallRate: 1, WorkMin: 1500 * time.Millisecond, WorkMax: 2 * time.Second},
		},
	}
}

// LookupMutantCase finds a mutant's case by its client kind.
func LookupMutantCase(client string) (MutantCase, error) {
	var names []string
	for _, c := range MutantCases() {
		if c.Client == client {
			return c, nil
		}
		names = append(names, c.Client)
	}
	return MutantCase{}, fmt.Errorf("no randomized scenario for %q: choose one of %s", client, strings.Join(names, ", "))
}

// Run is the case's scenario for client (the mutant or its control) on
// one seed; a positive duration replaces the case's.
func (c MutantCase) Run(client string, seed int64, duration time.Duration) Scenario {
	s := c.Scenario
	s.Client, s.Seed = client, seed
	if duration > 0 {
		s.Duration = duration
	}
	return s
}

// Summary describes the case's scenario in one line, defaults filled in
// (a case names no server: the measurement's topology gives it, and the
// run validates it).
func (c MutantCase) Summary() string { return c.Scenario.Outline() }
