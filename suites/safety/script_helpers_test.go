package safety_test

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/lockcheck/lockcheck/checker"
	"github.com/lockcheck/lockcheck/history"
	"github.com/lockcheck/lockcheck/reports"
	"github.com/lockcheck/lockcheck/scenarios"
	"github.com/lockcheck/lockcheck/scenarios/lockclient"
	"github.com/lockcheck/lockcheck/suites"
	"github.com/lockcheck/lockcheck/topology"
)

// key is the one lock key of every script.
var key = scenarios.LockKey(0)

// script starts kind on the newest build (or on opts' images) and builds
// one worker per client kind on it, both removed when the spec ends.
func script(ctx context.Context, kind topology.Kind, opts topology.Options, kinds []string, configure func(int, *lockclient.Config)) *scenarios.Script {
	return scriptOn(ctx, env.Start(ctx, newest, kind, opts), kinds, configure)
}

// sharedScript is script on a standalone server of the newest build that
// every spec scripting with the same options shares: such a spec needs the
// server's replies and an empty key space, not a server of its own, and
// gets the server as a new one would be for that (sharedStandalone). A
// spec that changes the server itself (its clock, its process, its
// configuration) uses script.
func sharedScript(ctx context.Context, opts topology.Options, kinds []string, configure func(int, *lockclient.Config)) *scenarios.Script {
	t := sharedStandalone(ctx, opts)
	keptShared(t)
	return scriptOn(ctx, t, kinds, configure)
}

// shared are the standalone servers of sharedScript, by their options;
// they go after the suite.
var shared = map[string]*topology.Topology{}

var _ = AfterSuite(func(ctx SpecContext) {
	for _, t := range shared {
		Expect(t.Terminate(ctx)).To(Succeed())
	}
}, NodeTimeout(time.Minute))

// sharedStandalone is the shared standalone server for opts, started by
// the first spec that asks and emptied for each next one: no keys and no
// cached scripts (FLUSHALL, SCRIPT FLUSH), its client links healed. One
// that does not answer is replaced, so that no spec fails for the one
// before it.
func sharedStandalone(ctx context.Context, opts topology.Options) *topology.Topology {
	a := env.Available[newest]
	if a.Image == "" {
		Skip("unavailable: " + a.Reason)
	}
	id := fmt.Sprintf("%+v", opts)
	if t := shared[id]; t != nil {
		err := emptied(ctx, t, opts)
		if err == nil {
			return t
		}
		AddReportEntry("shared server replaced", err.Error())
		delete(shared, id)
		Expect(t.Terminate(ctx)).To(Succeed())
	}
	t, err := topology.Start(ctx, env.Engine, a.Build, topology.Standalone, topology.WithImage(a.Image), topology.WithOptions(opts))
	Expect(err).NotTo(HaveOccurred())
	shared[id] = t
	return t
}

// keptShared keeps a shared server's logs for a spec that failed on it, as
// the suite's setup keeps a spec's own topology's (registered before the
// script's cleanups, it runs after them).
func keptShared(t *topology.Topology) {
	DeferCleanup(func(ctx SpecContext) {
		if !CurrentSpecReport().Failed() {
			return
		}
		suites.KeepLogs(ctx, t, "node logs (the shared server's since it started)")
	}, NodeTimeout(time.Minute))
}

// emptied makes a used server what a new one is to a script.
func emptied(ctx context.Context, t *topology.Topology, opts topology.Options) error {
	for _, n := range t.Servers() {
		if opts.ProxyClients {
			if err := n.HealLinks(); err != nil {
				return err
			}
		}
		for _, cmd := range [][]string{{"FLUSHALL"}, {"SCRIPT", "FLUSH"}} {
			if _, err := n.Do(ctx, cmd...); err != nil {
				return err
			}
		}
	}
	return nil
}

// scriptOn builds one worker per client kind on t, removed when the spec
// ends.
func scriptOn(ctx context.Context, t *topology.Topology, kinds []string, configure func(int, *lockclient.Config)) *scenarios.Script {
	s, err := scenarios.NewScript(t, kinds, configure)
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(s.Close)
	// A spec that fails before its judge still leaves what it recorded.
	DeferCleanup(func(ctx SpecContext) {
		if CurrentSpecReport().Failed() && !judged[s] && len(s.History().Ops) > 0 {
			judge(ctx, s)
		}
	}, NodeTimeout(time.Minute))
	return s
}

// judged marks the scripts whose run folder judge wrote.
var judged = map[*scenarios.Script]bool{}

// judge checks what a script recorded, as a run's history is checked, and
// writes the run's files (history.json, result.json, report.html, the
// nodes' logs) into the spec's run folder, as run does.
func judge(ctx context.Context, s *scenarios.Script) (*history.History, *checker.Result) {
	judged[s] = true
	h := s.History()
	wctx := context.WithoutCancel(ctx)
	r, err := checker.Run(wctx, h, checker.OptionsFor(h))
	Expect(err).NotTo(HaveOccurred())
	AddReportEntry("verdict", string(r.Verdict)+": "+r.Summary)
	dir := suites.RunDir()
	Expect(h.Save(filepath.Join(dir, "history.json"))).To(Succeed())
	Expect(reports.WriteRun(dir, h, r, reports.NewRunResult(h, r, nil))).To(Succeed())
	Expect(s.Topo.SaveLogs(wctx, filepath.Join(dir, "nodes"))).To(Succeed())
	return h, r
}

// ok asserts that a script's lock call did what the script needs next.
func ok(r scenarios.Step, what string) scenarios.Step {
	ExpectWithOffset(1, r.Outcome).To(Equal(history.OK), "%s: %+v", what, r)
	return r
}

// freezer freezes worker 0 at its MidOp hook (between the two commands of
// a lock step) until resume is closed; paused is closed when it got there.
// The calls get a deadline that outlasts the freeze.
func freezer() (configure func(int, *lockclient.Config), paused, resume chan struct{}) {
	paused, resume = make(chan struct{}), make(chan struct{})
	return func(w int, cfg *lockclient.Config) {
		cfg.Timeout = 5 * time.Second
		if w == 0 {
			cfg.MidOp = func(context.Context, string) { close(paused); <-resume }
		}
	}, paused, resume
}

// frozen starts call, one of worker 0's lock calls, and returns once the
// worker is frozen at its MidOp hook or, for a client with no such point,
// once the call is done. wake lets it go on and returns the call's step.
func frozen(call func() scenarios.Step, paused, resume chan struct{}) (wake func() scenarios.Step) {
	done := make(chan scenarios.Step, 1)
	go func() { done <- call() }()
	select {
	case <-paused:
		return func() scenarios.Step { close(resume); return <-done }
	case st := <-done:
		return func() scenarios.Step { close(resume); return st }
	}
}

// expectCaught asserts that the check name failed, with a first finding
// of kind when kind is set, and the run is violated (caught: a mutant), or
// that it passed (its control).
func expectCaught(r *checker.Result, name string, caught bool, kind checker.FindingKind) {
	c := check(r, name)
	if !caught {
		ExpectWithOffset(1, c.Status).To(Equal(checker.Pass), c.Summary)
		return
	}
	ExpectWithOffset(1, c.Status).To(Equal(checker.Fail), c.Summary)
	if kind != "" {
		ExpectWithOffset(1, c.Findings[0].Kind).To(Equal(kind))
	}
	ExpectWithOffset(1, r.Verdict).To(Equal(checker.Violated))
}
