package safety_test

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/lockcheck/lockcheck/checker"
	"github.com/lockcheck/lockcheck/history"
	"github.com/lockcheck/lockcheck/scenarios"
	"github.com/lockcheck/lockcheck/scenarios/lockclient"
	"github.com/lockcheck/lockcheck/topology"
)

// Locks while a cluster slot moves, scripted. The three specs share one
// cluster (starting one is most of their time); each moves a slot of its
// own, chosen by its own lock key, and leaves the cluster serving every
// slot from one owner, so none depends on another's outcome, and a failed
// one does not skip the next (ContinueOnFailure). Every step that needs
// the migration at a given point waits for the servers to say it is
// there: the legacy migration is driven a phase at a time, and the atomic
// one is held at its hand-over by the target's own test hook.
var _ = Describe("locks while a cluster slot moves, scripted", Ordered, ContinueOnFailure, func() {
	var t *topology.Topology
	BeforeAll(func(ctx SpecContext) {
		t = env.Start(ctx, newest, topology.Cluster, topology.Options{})
	}, NodeTimeout(3*time.Minute))

	It("follows ASK to the target for every lock call, and serves the lock there after the hand-over", Label(newest, string(topology.Cluster), "ask-redirect", "quick"), func(ctx SpecContext) {
		askRedirect(ctx, t)
	}, SpecTimeout(time.Minute))

	It("holds an acquire sent during an atomic migration's final switch and answers it from the new owner", Label(newest, string(topology.Cluster), "atomic-switch", "quick"), func(ctx SpecContext) {
		atomicSwitch(ctx, t)
	}, SpecTimeout(2*time.Minute))

	It("refuses a fenced transaction whose keys are split, and applies none of it", Label(newest, string(topology.Cluster), "split-multi", "quick"), func(ctx SpecContext) {
		crossSlot(ctx, t)
		splitMulti(ctx, t)
	}, SpecTimeout(time.Minute))
})

// askRedirect: a legacy migration of the lock key's slot has begun and
// the key is on neither side, so the source answers ASK for it (shown
// first with the acquire sent to the source alone). The native client's
// acquire goes to the source, meets ASK and is sent again to the target
// after ASKING: the lock lives on the target, the source holds nothing of
// the slot. A second worker is refused by the target, and the holder
// extends and releases there, each call having met exactly one ASK. After
// the hand-over a worker made then (whose client learned the new owner
// when it was made) takes the lock from the target with no redirect at
// all.
func askRedirect(ctx context.Context, t *topology.Topology) {
	const k = "lock:{ask}"
	ttl := time.Minute
	slot := topology.KeySlot(k)
	from, to := migrationPair(ctx, t, k)
	s := scriptOn(ctx, t, []string{"native", "native"}, nil)
	l, err := t.BeginLegacyMigration(ctx, from, to, slot, slot, topology.MigrateOptions{})
	Expect(err).NotTo(HaveOccurred())
	handedOver := false
	DeferCleanup(func(ctx SpecContext) {
		if !handedOver {
			Expect(l.Rollback(ctx)).To(Succeed())
		}
	}, NodeTimeout(time.Minute))

	_, err = from.Do(ctx, "SET", k, "probe", "NX", "PX", "60000")
	var reply topology.ServerError
	Expect(errors.As(err, &reply)).To(BeTrue(), "the source's answer to an acquire sent to it alone: %v", err)
	Expect(string(reply)).To(Equal(fmt.Sprintf("ASK %d %s", slot, to.Internal())), "the source sends an acquire of the absent key to the target")
	asks, _ := redirects(ctx, from)

	a := ok(s.Acquire(ctx, 0, k, ttl), "worker 0's acquire, followed from the source to the target")
	Expect(asking(ctx, to, "GET", k)).To(Equal(a.Token), "the lock lives on the target")
	Expect(keysIn(ctx, from, slot)).To(Equal(0), "and not on the source")
	b := s.Acquire(ctx, 1, k, ttl)
	Expect(b.Outcome).To(Equal(history.Fail), "worker 1's acquire of the held lock: %+v", b)
	Expect(b.Err).To(BeEmpty(), "a nil reply from the target, not an error")
	ok(s.Extend(ctx, 0, k, a.Token, ttl), "worker 0's extend on the target")
	ok(s.Release(ctx, 0, k, a.Token), "worker 0's release on the target")
	Expect(keysIn(ctx, to, slot)).To(Equal(0), "the release deleted the lock on the target")
	nowAsks, _ := redirects(ctx, from)
	Expect(nowAsks).To(Equal(asks+4), "each of the four calls met one ASK on the source")

	Expect(l.Finish(ctx)).To(Succeed())
	handedOver = true
	Expect(t.AwaitSlotOwner(ctx, slot, slot, to, 30*time.Second)).To(Succeed())
	w, err := s.AddWorker("native", nil)
	Expect(err).NotTo(HaveOccurred())
	asks, moved := redirects(ctx, from)
	c := ok(s.Acquire(ctx, w, k, ttl), "the new worker's acquire after the hand-over")
	Expect(to.Do(ctx, "GET", k)).To(Equal(c.Token), "the target serves the lock as the slot's owner, without ASKING")
	nowAsks, nowMoved := redirects(ctx, from)
	Expect([]int{nowAsks, nowMoved}).To(Equal([]int{asks, moved}), "the source redirected nothing: the acquire went to the target at once")
	ok(s.Release(ctx, w, k, c.Token), "the new worker's release")

	h, r := judge(ctx, s)
	Expect(checker.ExpectLockCorrect.Meets(r, h.Meta.Fenced)).To(Succeed())
}

// atomicSwitch: worker 0 holds the lock when an atomic migration of its
// slot starts. The target's test hook (DEBUG SLOTMIGRATION
// PREVENT-FAILOVER, which Valkey's own tests use to hold this state)
// stops the migration after the source has paused writes and granted the
// hand-over, before the target takes the slot: the source says so
// (failover-granted, writes paused for the migration). Worker 1's acquire
// then reaches the source, which holds it back (the source lists it as a
// blocked SET); only then is the hook cleared, the target takes the slot,
// the source unpauses and answers the held SET with MOVED, and the target
// refuses it (nil): worker 0's lock came over with the slot. Worker 0
// extends and releases on the new owner. The source's write pause would
// end on its own after twice cluster-manual-failover-timeout; the spec
// raises that to a minute so that the hold outlasts any slow step, and
// the migration ending in success (not "unpaused before migration
// completed") shows the pause held to the end.
func atomicSwitch(ctx context.Context, t *topology.Topology) {
	const k = "lock:{switch}"
	ttl := time.Minute
	slot := topology.KeySlot(k)
	from, to := migrationPair(ctx, t, k)
	// Worker 1's acquire waits at the source for the whole hold: its
	// deadline outlasts the steps that prove it is held.
	s := scriptOn(ctx, t, []string{"native", "native"}, func(_ int, cfg *lockclient.Config) { cfg.Timeout = 45 * time.Second })
	a := ok(s.Acquire(ctx, 0, k, ttl), "worker 0's acquire before the migration")

	setConfig(ctx, from, "cluster-manual-failover-timeout", "60000")
	release := holdHandOver(ctx, to)
	m, err := t.MigrateSlots(ctx, topology.MigrateValkeyAtomic, from, to, slot, slot, topology.MigrateOptions{})
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(cancelUnlessDone, m, NodeTimeout(time.Minute))
	awaitPhase(ctx, m, "failover-granted", 30*time.Second)
	expectHeldAtHandOver(ctx, m)
	_, moved := redirects(ctx, from)

	held := make(chan scenarios.Step, 1)
	go func() { defer GinkgoRecover(); held <- s.Acquire(ctx, 1, k, ttl) }()
	awaitPostponed(ctx, from, "set", 10*time.Second)
	expectHeldAtHandOver(ctx, m)
	Expect(held).NotTo(Receive(), "worker 1's acquire returned while the source held it")
	release()
	var b scenarios.Step
	Eventually(ctx, held).WithTimeout(45 * time.Second).Should(Receive(&b))
	Expect(b.Outcome).To(Equal(history.Fail), "worker 1's acquire, answered after the switch: %+v", b)
	Expect(b.Err).To(BeEmpty(), "a nil reply from the new owner, not an error")
	st, err := m.Wait(ctx)
	Expect(err).NotTo(HaveOccurred())
	Expect(st.State).To(Equal(topology.MigrationSucceeded), "%s", st)
	_, nowMoved := redirects(ctx, from)
	Expect(nowMoved).To(Equal(moved+1), "the source answered the held SET with MOVED once the slot was the target's")
	Expect(to.Do(ctx, "GET", k)).To(Equal(a.Token), "worker 0's lock is on the new owner")
	Expect(keysIn(ctx, from, slot)).To(Equal(0), "and no longer on the source")

	ok(s.Extend(ctx, 0, k, a.Token, ttl), "worker 0's extend on the new owner")
	ok(s.Release(ctx, 0, k, a.Token), "worker 0's release on the new owner")
	Expect(to.Do(ctx, "EXISTS", k)).To(Equal("0"), "the release deleted the lock on the new owner")
	h, r := judge(ctx, s)
	Expect(checker.ExpectLockCorrect.Meets(r, h.Meta.Fenced)).To(Succeed())
}

// crossSlot: a fenced acquire whose lock and fence keys share no hash
// tag, sent as one transaction to the primary that owns both slots, is
// refused at EXEC with CROSSSLOT and changes neither key. The fenced
// client cannot be made to send it (it derives the fence key from the
// lock key's hash tag, and valkey-go refuses a transaction across slots
// before sending it), so the spec sends the transaction itself.
func crossSlot(ctx context.Context, t *topology.Topology) {
	lock, fence, owner := crossSlotKeys(ctx, t)
	Expect(owner.Do(ctx, "SET", fence, "7")).To(Equal("OK"))
	DeferCleanup(func(ctx SpecContext) { Expect(owner.Do(ctx, "DEL", fence)).Error().NotTo(HaveOccurred()) }, NodeTimeout(time.Minute))
	replies, err := pipeline(ctx, owner, []string{"MULTI"}, []string{"SET", lock, "token", "NX", "PX", "60000"}, []string{"INCR", fence}, []string{"EXEC"})
	Expect(err).NotTo(HaveOccurred())
	Expect(replies[:3]).To(Equal([]string{"OK", "QUEUED", "QUEUED"}), "%s", replies)
	Expect(replies[3]).To(HavePrefix("CROSSSLOT"), "EXEC of %s and %s", lock, fence)
	Expect(owner.Do(ctx, "EXISTS", lock)).To(Equal("0"), "no lock set")
	Expect(owner.Do(ctx, "GET", fence)).To(Equal("7"), "the fence counter unchanged")
}

// splitMulti: worker 0 holds the lock (fence 1) when a legacy migration
// of its slot begins, and MoveKey takes the lock key alone to the target:
// the slot is split, the fence key still on the source. Worker 1's fenced
// acquire (the fenced client through the script) goes to the source,
// whose ASK for the lock key sends the whole transaction to the target,
// where EXEC finds the fence key missing: TRYAGAIN. Neither node changed
// either key: the lock still worker 0's on the target, the fence counter
// still 1 on the source and absent on the target. The migration is rolled
// back and worker 0 releases.
func splitMulti(ctx context.Context, t *topology.Topology) {
	const k, fence = "lock:{split}", "fence:{split}"
	ttl := time.Minute
	slot := topology.KeySlot(k)
	from, to := migrationPair(ctx, t, k)
	s := scriptOn(ctx, t, []string{"fenced", "fenced"}, nil)
	a := ok(s.Acquire(ctx, 0, k, ttl), "worker 0's fenced acquire before the migration")
	l, err := t.BeginLegacyMigration(ctx, from, to, slot, slot, topology.MigrateOptions{})
	Expect(err).NotTo(HaveOccurred())
	rolledBack := false
	DeferCleanup(func(ctx SpecContext) {
		if !rolledBack {
			Expect(l.Rollback(ctx)).To(Succeed())
		}
	}, NodeTimeout(time.Minute))
	Expect(l.MoveKey(ctx, k)).To(Succeed())
	Expect([]int{keysIn(ctx, from, slot), keysIn(ctx, to, slot)}).To(Equal([]int{1, 1}), "the slot split: the fence key on the source, the lock key on the target")
	counter := strconv.FormatInt(a.Fence, 10)
	Expect(from.Do(ctx, "GET", fence)).To(Equal(counter))

	b := s.Acquire(ctx, 1, k, ttl)
	Expect(b.Outcome).To(Equal(history.Fail), "worker 1's fenced acquire across the split: %+v", b)
	Expect(b.Err).To(HavePrefix("TRYAGAIN"))
	Expect(asking(ctx, to, "GET", k)).To(Equal(a.Token), "the lock on the target is still worker 0's")
	Expect(asking(ctx, to, "EXISTS", fence)).To(Equal("0"), "no fence counter on the target")
	Expect(from.Do(ctx, "GET", fence)).To(Equal(counter), "the fence counter on the source unchanged")
	Expect([]int{keysIn(ctx, from, slot), keysIn(ctx, to, slot)}).To(Equal([]int{1, 1}), "no key created on either node")

	Expect(l.Rollback(ctx)).To(Succeed())
	rolledBack = true
	ok(s.Release(ctx, 0, k, a.Token), "worker 0's release after the rollback")
	h, r := judge(ctx, s)
	Expect(checker.ExpectLockCorrect.Meets(r, h.Meta.Fenced)).To(Succeed())
}
