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

// recorded runs one client call and records it as the workload would.
func recorded(rec *history.Recorder, worker int, kind history.Kind, key string, ttl time.Duration, call func() scenarios.Result) scenarios.Result {
	start := rec.Now()
	r := call()
	rec.Add(history.Op{Client: worker, Worker: worker, Key: key, Kind: kind, Token: r.Token, TTLms: ttl.Milliseconds(),
		Fence: r.Fence, HasFence: r.HasFence, Outcome: r.Outcome, Error: r.Err, Call: start, Return: rec.Now()})
	return r
}

// A fence drawn outside the lock step needs a pause between SET and INCR
// to go wrong, and a random workload rarely lines one up with a holder
// that writes at the right moment. This scenario scripts it: the mutant
// pauses past its TTL between SET and INCR, a correct fenced client takes
// the lock meanwhile, and the mutant's write, with the bigger fence, lands
// while the correct client holds.
var _ = Describe("mutant-fence-outside, scripted", func() {
	s := scenario{build: newest, kind: topology.Standalone, client: "mutant-fence-outside"}
	It("is caught by the fence check: a write accepted over the current holder with a bigger fence", labels(s, "mutant", "quick"), func(ctx SpecContext) {
		t := env.Start(ctx, s.build, s.kind, topology.Options{})

		rec := history.NewRecorder()
		res := scenarios.NewResource(rec, true, 0)
		cfg := scenarios.ConfigFor(t)
		cfg.Timeout = 5 * time.Second
		slow := cfg
		slow.FenceGap = 1500 * time.Millisecond
		stale, err := scenarios.NewClient("mutant-fence-outside", slow)
		Expect(err).NotTo(HaveOccurred())
		defer stale.Close()
		good, err := scenarios.NewClient("fenced", cfg)
		Expect(err).NotTo(HaveOccurred())
		defer good.Close()
		key, ttl := scenarios.LockKey(0), time.Second

		done := make(chan scenarios.Result)
		go func() {
			done <- recorded(rec, 0, history.Acquire, key, ttl, func() scenarios.Result { return stale.Acquire(ctx, key, ttl) })
		}()
		time.Sleep(ttl + 100*time.Millisecond) // the mutant's SET has expired; its INCR has not run
		b := recorded(rec, 1, history.Acquire, key, 5*time.Second, func() scenarios.Result { return good.Acquire(ctx, key, 5*time.Second) })
		Expect(b.Outcome).To(Equal(history.OK))
		a0 := <-done
		Expect(a0.Outcome).To(Equal(history.OK))
		res.Write(scenarios.Write{Client: 0, Worker: 0, Key: key, Token: a0.Token, Fence: a0.Fence, HasFence: true})
		res.Write(scenarios.Write{Client: 1, Worker: 1, Key: key, Token: b.Token, Fence: b.Fence, HasFence: true})
		recorded(rec, 1, history.Release, key, 0, func() scenarios.Result { return good.Release(ctx, key, b.Token) })

		h := rec.History(history.Meta{Server: t.Build.Name, Version: t.Version, Topology: string(t.Kind), Client: "mutant-fence-outside", Fenced: true})
		r, err := checker.Run(context.WithoutCancel(ctx), h, checker.Options{AllowDoubleHolders: true})
		Expect(err).NotTo(HaveOccurred())
		AddReportEntry("verdict", string(r.Verdict)+": "+r.Summary)
		f := check(r, checker.Fence)
		Expect(f.Status).To(Equal(checker.Fail), f.Summary)
		Expect(f.Findings[0].Kind).To(Equal("write_over_holder"))
		Expect(r.Verdict).To(Equal(checker.Violated))
	}, SpecTimeout(time.Minute))
})
