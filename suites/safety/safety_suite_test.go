// Suite safety runs lock clients under faults on real servers and holds
// the expected verdicts: the article's failover race is found, a fenced
// client keeps the resource safe, every mutant is caught by the check its
// bug breaks. Labels: build, topology, client, fault, and "quick" for the
// slice make test runs.
//
// Every quick spec is a script (scenarios.Script): it drives the
// interleaving that exposes the bug or the fault's effect on purpose and
// waits on the server's state, never on a guess at the machine's speed, so
// it passes or fails the same way on every machine. How often randomized
// workloads catch the same bugs is measured by lockcheck catch-rate, not
// tested here.
package safety_test

import (
	"context"
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/lockcheck/lockcheck/checker"
	"github.com/lockcheck/lockcheck/harness"
	"github.com/lockcheck/lockcheck/history"
	"github.com/lockcheck/lockcheck/scenarios"
	"github.com/lockcheck/lockcheck/suites"
)

func TestSafety(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "safety")
}

var env = suites.Setup()

// run runs s through lockcheck run's one path (harness.Execute) into the
// spec's run folder (suites.RunDir), which keeps report.html, the history
// and the nodes' logs whatever the spec concludes.
func run(ctx context.Context, s scenarios.Scenario) (*history.History, *checker.Result) {
	for _, b := range s.Builds() {
		if a := env.Available[b]; a.Image == "" {
			Skip("unavailable: " + a.Reason)
		}
	}
	out, err := harness.Execute(ctx, env.Engine, s, harness.Options{Out: suites.RunDir(), Log: GinkgoWriter})
	Expect(err).NotTo(HaveOccurred())
	AddReportEntry("verdict", string(out.Check.Verdict)+": "+out.Check.Summary)
	for _, n := range out.Result.Notes {
		AddReportEntry("note", n)
	}
	return out.History, out.Check
}

// check returns a named check of a result.
func check(r *checker.Result, name string) checker.Check {
	c, ok := r.Check(name)
	Expect(ok).To(BeTrue(), "the result has no %s check", name)
	return c
}

func labels(s scenarios.Scenario, extra ...string) Labels {
	l := Labels{s.Server, string(s.Topology), s.Client}
	l = append(l, s.Faults...)
	return append(l, extra...)
}
