package safety_test

import (
	"context"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/lockcheck/lockcheck/checker"
	"github.com/lockcheck/lockcheck/scenarios"
	"github.com/lockcheck/lockcheck/topology"
)

// pythonAdapter is the shipped redis-py adapter as a client kind, from
// this suite's folder.
const pythonAdapter = "external:/usr/bin/python3 ../../adapters/python/redis_py_adapter.py"

// A library gated with lockcheck speaks the adapter protocol; a broken one
// must fail the default gate (lock-correct) with no flag naming its bug.
// Each spec runs the Python adapter with one deliberate bug (--bug) in the
// script that shows it, and the correct adapter in the same script, which
// must meet the gate: the checks see only the history.
var _ = Describe("broken adapters, scripted, judged by the default gate", func() {
	cases := []struct {
		bug, why string
		script   func(ctx context.Context, s *scenarios.Script)
	}{
		{"release-ignores-reply", "after its lease ended, its release answers 0 and is reported done while the next holder holds the key", scriptStaleRelease},
		{"extend-blind", "after its lease ended, its PEXPIRE extends the next holder's lock and is reported as its own extend", scriptStaleExtend},
	}
	for _, c := range cases {
		for _, broken := range []bool{true, false} {
			client, name := pythonAdapter, "the correct adapter meets "+string(checker.DefaultExpectation)+" where --bug "+c.bug+" fails it"
			if broken {
				client += " --bug " + c.bug
				name = "an adapter with --bug " + c.bug + " fails " + string(checker.DefaultExpectation) + ": " + c.why
			}
			It(name, Label(newest, string(topology.Standalone), "adapter", "mutant", "quick"), func(ctx SpecContext) {
				s := sharedScript(ctx, topology.Options{}, []string{client, client, client}, nil)
				c.script(ctx, s)
				h, r := judge(ctx, s)
				err := checker.DefaultExpectation.Meets(r, h.Meta.Fenced)
				if !broken {
					Expect(err).NotTo(HaveOccurred())
					return
				}
				Expect(err).To(HaveOccurred())
				Expect(check(r, checker.Linearizability).Status).To(Equal(checker.Fail), r.Summary)
			}, SpecTimeout(time.Minute))
		}
	}
})
