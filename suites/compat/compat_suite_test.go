// Suite compat observes every lock command on every available build and
// topology and asserts that no reply contradicts what the build is expected
// to do (compat's expectation table). Cells are labelled per build,
// topology and check, e.g. -ginkgo.label-filter='valkey-9.1 && release.delifeq-held'.
package compat_test

import (
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/lockcheck/lockcheck/compat"
	"github.com/lockcheck/lockcheck/suites"
	"github.com/lockcheck/lockcheck/topology"
)

func TestCompat(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "compat")
}

var env = suites.Setup()

var _ = Describe("lock commands", func() {
	for _, b := range topology.Builds() {
		for _, kind := range topology.Kinds() {
			Context(b.Name+" "+string(kind), Ordered, Label(suites.BuildLabel(b), suites.KindLabel(kind)), func() {
				cells := map[string]compat.Cell{}
				BeforeAll(func(ctx SpecContext) {
					t := env.Start(ctx, b.Name, kind, compat.Options())
					observed, err := compat.Observe(ctx, t, GinkgoWriter)
					Expect(err).NotTo(HaveOccurred())
					for _, c := range observed {
						cells[c.Case] = c
					}
				}, NodeTimeout(5*time.Minute))

				for _, chk := range compat.Cases() {
					if !chk.Applies(kind) {
						continue
					}
					It(chk.Name, Label(suites.CheckLabel(chk.Name)), func() {
						c, ok := cells[chk.Name]
						Expect(ok).To(BeTrue(), "the check was not observed")
						AddReportEntry("observed", string(c.Outcome)+": "+c.Observed)
						Expect(c.Outcome).To(BeElementOf(compat.Pass, compat.Unsupported),
							"observed %q, expected %q", c.Observed, c.Expected)
					})
				}
			})
		}
	}
})

// A replicated topology half way through a rolling upgrade (n1 on the
// older build): what the newer primary feeds the older replica, and what
// the replica then holds.
var _ = Describe("mixed replication", func() {
	for _, pair := range compat.MixedPairs {
		Context(pair.Primary+" over "+pair.Replica, Ordered, Label(pair.Primary, pair.Replica, suites.KindLabel(topology.Replicated), "mixed"), func() {
			cells := map[string]compat.Cell{}
			BeforeAll(func(ctx SpecContext) {
				old := env.Available[pair.Replica]
				if old.Image == "" {
					Skip("unavailable: " + old.Reason)
				}
				t := env.Start(ctx, pair.Primary, topology.Replicated, compat.MixedOptions(old.Image))
				observed, err := compat.ObserveMixed(ctx, t, pair.Replica, GinkgoWriter)
				Expect(err).NotTo(HaveOccurred())
				for _, c := range observed {
					cells[c.Case] = c
				}
			}, NodeTimeout(5*time.Minute))

			for _, name := range compat.MixedCases() {
				It(name, Label(suites.CheckLabel(name)), func() {
					c, ok := cells[name]
					Expect(ok).To(BeTrue(), "the check was not observed")
					AddReportEntry("observed", string(c.Outcome)+": "+c.Observed)
					Expect(c.Outcome).To(Equal(compat.Pass), "observed %q, expected %q", c.Observed, c.Expected)
				})
			}
		})
	}
})
