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
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/lockcheck/lockcheck/checker"
	"github.com/lockcheck/lockcheck/history"
	"github.com/lockcheck/lockcheck/scenarios"
	"github.com/lockcheck/lockcheck/suites"
	"github.com/lockcheck/lockcheck/topology"
)

func TestSafety(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "safety")
}

var env = suites.Setup()

// scenario is one safety run's plain data.
type scenario struct {
	build     string
	kind      topology.Kind
	client    string
	faults    []scenarios.Fault
	duration  time.Duration
	ttl       time.Duration
	seed      int64
	clients   int
	keys      int
	workload  func(*scenarios.Workload)
	configure func(*scenarios.ClientConfig)
	topo      topology.Options
}

// run starts the scenario's topology, runs the workload with its faults,
// and checks the history; the history and result are kept as report
// entries and, with LOCKCHECK_SUITE_OUT set, as files.
func run(ctx context.Context, s scenario) (*history.History, *checker.Result) {
	t := env.Start(ctx, s.build, s.kind, s.topo)
	w := scenarios.Workload{Client: s.client, Duration: s.duration, TTL: s.ttl, Seed: s.seed, Clients: s.clients, Keys: s.keys}
	if s.workload != nil {
		s.workload(&w)
	}
	res, err := scenarios.Chaos{Workload: w, Faults: s.faults, Configure: s.configure}.Run(ctx, t)
	Expect(err).NotTo(HaveOccurred())
	h := res.History
	result, err := checker.Run(ctx, h, checker.OptionsFor(h))
	Expect(err).NotTo(HaveOccurred())
	AddReportEntry("verdict", string(result.Verdict)+": "+result.Summary)
	for _, n := range res.Notes {
		AddReportEntry("note", n)
	}
	keep(h)
	return h, result
}

// keep saves h under LOCKCHECK_SUITE_OUT, when set, named by the spec's
// labels.
func keep(h *history.History) {
	dir := os.Getenv("LOCKCHECK_SUITE_OUT")
	if dir == "" {
		return
	}
	name := strings.NewReplacer(" ", "_", "/", "_").Replace(strings.Join(CurrentSpecReport().Labels(), "-"))
	Expect(os.MkdirAll(dir, 0o755)).To(Succeed())
	Expect(h.Save(filepath.Join(dir, name+".history.json"))).To(Succeed())
}

// check returns a named check of a result.
func check(r *checker.Result, name string) checker.Check {
	c, ok := r.Check(name)
	Expect(ok).To(BeTrue(), "the result has no %s check", name)
	return c
}

func labels(s scenario, extra ...string) Labels {
	l := Labels{s.build, string(s.kind), s.client}
	for _, f := range s.faults {
		l = append(l, f.Name())
	}
	return append(l, extra...)
}
