package safety_test

import (
	"context"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/lockcheck/lockcheck/checker"
	"github.com/lockcheck/lockcheck/history"
	"github.com/lockcheck/lockcheck/scenarios"
	"github.com/lockcheck/lockcheck/topology"
)

// Every mutant is a known bug, and each spec scripts the interleaving in
// which that bug shows: a lease that ends under its holder (the script
// waits until the server says the key is gone), another client that takes
// the lock, the buggy call. The check the bug breaks must fail. The
// correct client runs the same script and must pass that same check, so a
// script that fails every client proves nothing about the mutant. The
// checks see only the history: they are never told which client ran.
var _ = Describe("mutant clients, scripted", func() {
	cases := []struct {
		mutant, control string
		breaks          string
		why             string
		script          func(ctx context.Context, s *scenarios.Script)
	}{
		{"mutant-del", "native", checker.Linearizability,
			"a plain DEL releases the lock another client took after the first one's lease ended", scriptStaleRelease},
		{"mutant-extend-nopx", "native", checker.TTL,
			"an extend without PX leaves the lock without expiry after its holder crashed", scriptCrashAfterExtend},
		{"mutant-extend-keepttl", "native", checker.DoubleHolder,
			"a KEEPTTL extend keeps the old deadline, so another client takes the lock inside the lease its holder believes in", scriptExtendThenExpire},
		{"mutant-reacquire", "native", checker.Linearizability,
			"after a stall past its lease and another client's hold, a nil extend is hidden by a quiet SET NX and reported as an extend of an ended lease", scriptStallThenExtend},
		{"mutant-extend-blind", "native", checker.Linearizability,
			"after its lease ended, a PEXPIRE that never compares the value extends the next holder's lock", scriptStaleExtend},
		{"mutant-extend-ignores-reply", "native", checker.Linearizability,
			"after its lease ended, an extend that reads nil as success reports an extend of another client's lock", scriptStaleExtend},
		{"mutant-shared-token", "native", checker.DoubleHolder,
			"after its lease ended, the extend finds the value the next holder stored (the same for every acquisition) and succeeds: two workers believe they hold", scriptStaleExtend},
	}
	for _, c := range cases {
		mutantAndControl(c.mutant, c.control, c.breaks, c.why, func(ctx SpecContext, client string, caught bool) {
			s := sharedScript(ctx, topology.Options{}, []string{client, client, client}, nil)
			c.script(ctx, s)
			_, r := judge(ctx, s)
			expectCaught(r, c.breaks, caught, "")
		})
	}
})

// mutantAndControl registers two specs that run body: one for the mutant,
// which must be caught by breaks (why says how), and one for its control,
// which must pass that same check.
func mutantAndControl(mutant, control, breaks, why string, body func(ctx SpecContext, client string, caught bool)) {
	for _, client := range []string{mutant, control} {
		caught := client == mutant
		name := client + " passes " + breaks + " where " + mutant + " fails it"
		if caught {
			name = client + " is caught by " + breaks + ": " + why
		}
		It(name, Label(newest, string(topology.Standalone), client, "mutant", "quick"), func(ctx SpecContext) {
			body(ctx, client, caught)
		}, SpecTimeout(time.Minute))
	}
}

// scriptStaleRelease: worker 0's lease ends, worker 1 takes the lock for
// long, worker 0 releases with its old token, worker 2 tries to take the
// lock. A correct release answers 0 and worker 2 is refused.
func scriptStaleRelease(ctx context.Context, s *scenarios.Script) {
	a := ok(s.Acquire(ctx, 0, key, 500*time.Millisecond), "worker 0's acquire")
	Expect(s.AwaitGone(ctx, key, 10*time.Second)).To(Succeed())
	b := ok(s.Acquire(ctx, 1, key, 30*time.Second), "worker 1's acquire after the lease ended")
	s.Release(ctx, 0, key, a.Token)
	if c := s.Acquire(ctx, 2, key, 30*time.Second); c.Outcome == history.OK {
		s.Release(ctx, 2, key, c.Token)
	}
	s.Release(ctx, 1, key, b.Token)
}

// scriptCrashAfterExtend: worker 0 acquires, extends and crashes without
// releasing; well after the extended lease must have ended, the key is
// observed and worker 1 tries to take it. A correct extend sets an expiry,
// so the key is gone and worker 1 gets it.
func scriptCrashAfterExtend(ctx context.Context, s *scenarios.Script) {
	ttl := 2 * time.Second
	a := ok(s.Acquire(ctx, 0, key, ttl), "worker 0's acquire")
	e := ok(s.Extend(ctx, 0, key, a.Token, ttl), "worker 0's extend right after its acquire")
	s.SleepPast(ctx, e.Return, ttl+200*time.Millisecond)
	_, err := s.Observe(ctx, key)
	Expect(err).NotTo(HaveOccurred())
	if b := s.Acquire(ctx, 1, key, ttl); b.Outcome == history.OK {
		s.Release(ctx, 1, key, b.Token)
	}
}

// scriptExtendThenExpire: worker 0 acquires for 3 s and extends after 1 s,
// believing it holds until 4 s; as soon as the server lets the key go,
// worker 1 takes it. A correct extend moves the deadline, so the key goes
// only after the lease worker 0 believes in.
func scriptExtendThenExpire(ctx context.Context, s *scenarios.Script) {
	ttl := 3 * time.Second
	a := ok(s.Acquire(ctx, 0, key, ttl), "worker 0's acquire")
	s.SleepPast(ctx, a.Call, time.Second)
	ok(s.Extend(ctx, 0, key, a.Token, ttl), "worker 0's extend one second into a three-second lease")
	Expect(s.AwaitGone(ctx, key, 10*time.Second)).To(Succeed())
	b := ok(s.Acquire(ctx, 1, key, ttl), "worker 1's acquire once the key is gone")
	s.Release(ctx, 1, key, b.Token)
}

// scriptStallThenExtend: worker 0 stalls until its lease ended on the
// server and on the harness's clock, worker 1 takes and releases the lock
// meanwhile, and worker 0 wakes up and extends. A correct extend answers
// nil: the lock is lost.
func scriptStallThenExtend(ctx context.Context, s *scenarios.Script) {
	ttl := 500 * time.Millisecond
	a := ok(s.Acquire(ctx, 0, key, ttl), "worker 0's acquire")
	Expect(s.AwaitGone(ctx, key, 10*time.Second)).To(Succeed())
	s.SleepPast(ctx, a.Return, ttl+100*time.Millisecond)
	b := ok(s.Acquire(ctx, 1, key, 10*time.Second), "worker 1's acquire while worker 0 stalls")
	ok(s.Release(ctx, 1, key, b.Token), "worker 1's release")
	if e := s.Extend(ctx, 0, key, a.Token, ttl); e.Outcome == history.OK {
		s.Release(ctx, 0, key, a.Token)
	}
}

// scriptStaleExtend: worker 0 stalls until its lease ended on the server
// and on the harness's clock, worker 1 takes the lock for long, and worker
// 0 wakes up and extends while worker 1 holds. A correct extend answers
// nil; worker 1 releases at the end.
func scriptStaleExtend(ctx context.Context, s *scenarios.Script) {
	ttl := 500 * time.Millisecond
	a := ok(s.Acquire(ctx, 0, key, ttl), "worker 0's acquire")
	Expect(s.AwaitGone(ctx, key, 10*time.Second)).To(Succeed())
	s.SleepPast(ctx, a.Return, ttl+100*time.Millisecond)
	b := ok(s.Acquire(ctx, 1, key, 30*time.Second), "worker 1's acquire while worker 0 stalls")
	if e := s.Extend(ctx, 0, key, a.Token, 30*time.Second); e.Outcome == history.OK {
		s.Release(ctx, 0, key, a.Token)
	}
	s.Release(ctx, 1, key, b.Token)
}

// A lock step done in two commands goes wrong only when its client is
// frozen between them. The scripts freeze the mutant exactly there (its
// MidOp hook); the correct client, whose step is one command, has no
// such point and runs the same script frozen after its call instead.
var _ = Describe("two-command mutants, scripted", func() {
	mutantAndControl("mutant-setnx-expire", "native", checker.TTL,
		"frozen between SET NX and PEXPIRE, its lock has no expiry", func(ctx SpecContext, client string, caught bool) {
			freeze, paused, resume := freezer()
			s := sharedScript(ctx, topology.Options{}, []string{client}, freeze)
			// frozen between SET NX and PEXPIRE, or (one command) after it
			wake := frozen(func() scenarios.Step { return s.Acquire(ctx, 0, key, 2*time.Second) }, paused, resume)
			_, err := s.Observe(ctx, key)
			Expect(err).NotTo(HaveOccurred())
			a := ok(wake(), "worker 0's acquire")
			s.Release(ctx, 0, key, a.Token)

			_, r := judge(ctx, s)
			expectCaught(r, checker.TTL, caught, checker.KindNoExpiry)
		})
	mutantAndControl("mutant-release-get-del", "native", checker.Linearizability,
		"frozen between GET and DEL, it deletes the next holder's lock", func(ctx SpecContext, client string, caught bool) {
			freeze, paused, resume := freezer()
			s := sharedScript(ctx, topology.Options{}, []string{client, "native", "native"}, freeze)
			// a lease long enough that the release's GET surely finds it,
			// however loaded the machine
			a := ok(s.Acquire(ctx, 0, key, 2*time.Second), "worker 0's acquire")
			// frozen after GET found its token, before the DEL; or (one
			// command) released before the others come
			wake := frozen(func() scenarios.Step { return s.Release(ctx, 0, key, a.Token) }, paused, resume)
			Expect(s.AwaitGone(ctx, key, 10*time.Second)).To(Succeed())
			b := ok(s.Acquire(ctx, 1, key, 30*time.Second), "worker 1's acquire once the key is gone")
			wake()
			_, err := s.Observe(ctx, key)
			Expect(err).NotTo(HaveOccurred())
			if c := s.Acquire(ctx, 2, key, 30*time.Second); c.Outcome == history.OK {
				s.Release(ctx, 2, key, c.Token)
			}
			s.Release(ctx, 1, key, b.Token)

			_, r := judge(ctx, s)
			expectCaught(r, checker.Linearizability, caught, "")
		})
})

// A fence drawn outside the lock step goes wrong only when its holder is
// paused between SET and INCR for longer than its lease. The script
// freezes the mutant exactly there (its MidOp hook) until the server let
// its key go, lets a correct fenced client take the lock, then wakes it:
// its INCR draws the bigger fence, and its write lands while the fenced
// client holds. The control runs the same script with two fenced clients,
// whose fence is drawn in the SET's own step: worker 0 is frozen right
// after its acquire instead, and its write is only a stale one.
var _ = Describe("mutant-fence-outside, scripted", func() {
	mutantAndControl("mutant-fence-outside", "fenced", checker.Fence,
		"a write accepted over the current holder with a bigger fence", func(ctx SpecContext, client string, caught bool) {
			freeze, paused, resume := freezer()
			s := sharedScript(ctx, topology.Options{}, []string{client, "fenced"}, freeze)
			ttl := time.Second
			// frozen between its SET and its INCR, or (no step to freeze
			// inside) after its acquire
			wake := frozen(func() scenarios.Step { return s.Acquire(ctx, 0, key, ttl) }, paused, resume)
			Expect(s.AwaitGone(ctx, key, 10*time.Second)).To(Succeed())
			b := ok(s.Acquire(ctx, 1, key, 30*time.Second), "the fenced client's acquire")
			a := ok(wake(), "worker 0's acquire")
			s.Write(0, key, a)
			s.Write(1, key, b)
			s.Release(ctx, 1, key, b.Token)

			_, r := judge(ctx, s)
			expectCaught(r, checker.Fence, caught, checker.KindWriteOverHolder)
		})
})

// mutant-timeout-held needs an acquire that gets no reply: the primary's
// client links swallow every byte (the blackhole-primary fault's
// mechanism) while another worker holds the lock, so the acquire times out
// without having taken the lock. The mutant takes the timeout for success;
// the correct client records an unknown outcome and holds nothing.
var _ = Describe("mutant clients, scripted on a broken link", func() {
	mutantAndControl("mutant-timeout-held", "native", checker.DoubleHolder,
		"an acquire that timed out while another worker held the lock is taken for one that succeeded",
		func(ctx SpecContext, client string, caught bool) {
			s := sharedScript(ctx, topology.Options{ProxyClients: true}, []string{client, client}, nil)
			held := ok(s.Acquire(ctx, 1, key, 30*time.Second), "worker 1's acquire")
			p, err := s.Topo.Primary(ctx, key)
			Expect(err).NotTo(HaveOccurred())
			Expect(p.BlackholeLinks()).To(Succeed())
			DeferCleanup(p.HealLinks)
			a := s.Acquire(ctx, 0, key, 30*time.Second)
			Expect(p.HealLinks()).To(Succeed())
			if caught {
				Expect(a.Outcome).To(Equal(history.OK), "the mutant reports its timed-out acquire as done")
			} else {
				Expect(a.Outcome).To(Equal(history.Unknown), "the acquire got no reply: its outcome is unknown")
			}
			s.Release(ctx, 1, key, held.Token)
			_, r := judge(ctx, s)
			expectCaught(r, checker.DoubleHolder, caught, "")
		})
})
