package checker

import (
	"context"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lockcheck/lockcheck/history"
)

// Every finding kind has an explanation, built from a history by the
// checker, that names its facts: the workers, the replies and their
// times, the fault window between (with its target node, and the node
// that took over as the primary, which answered the second holder) and
// the rule a correct lock keeps.
func TestExplainEveryKind(t *testing.T) {
	kill := history.Fault{Name: "kill-primary", Target: "n0", Start: 100e6, End: 200e6}
	promoted := history.Fault{Name: "kill-primary", Target: "n0", Start: 100e6, End: 400e6, Promoted: "n2", PromotedAt: 250e6}
	cases := []struct {
		kind    FindingKind
		redlock bool
		ops     []history.Op
		faults  []history.Fault
		facts   []string
	}{
		{kind: KindDoubleHolder, ops: []history.Op{acq(1, "a1", ok, 0, 1), acq(2, "b1", ok, 300, 301)}, faults: []history.Fault{kill},
			facts: []string{"Worker 1 held lock:{a} from 0.00 s (its acquire's OK)", "until 1.00 s (its lease's end)", "kill-primary on n0 (0.10 s-0.20 s)", "Worker 2 was told it holds at 0.30 s", "only a fence keeps the resource safe"}},
		{kind: KindDoubleHolder, ops: []history.Op{acq(1, "a1", ok, 0, 1), acq(2, "b1", ok, 300, 301)}, faults: []history.Fault{promoted},
			facts: []string{"kill-primary on n0 (0.10 s-0.40 s; n2 serving as the primary from 0.25 s)", "Worker 2 was told it holds at 0.30 s (its acquire's OK, from n2, which took over from n0 at 0.25 s)"}},
		{kind: KindIllegalLock, ops: []history.Op{acq(1, "a1", ok, 0, 1), acq(2, "b1", ok, 300, 301)},
			facts: []string{"No one order of the lock operations on lock:{a}", "worker 1's acquire got OK at 0.00 s"}},
		{kind: KindLostIncrement, ops: []history.Op{incr(1, 0, ok, 10, 20), incr(2, 0, ok, 12, 22)},
			facts: []string{"Worker 1 read the counter at 0 and wrote 1", "worker 2 read 0 and wrote 1", "both read the same value", "an increment was lost"}},
		{kind: KindLostIncrement, ops: []history.Op{incr(1, 5, ok, 10, 20), incr(2, 3, ok, 30, 40)},
			facts: []string{"worker 2 read a value older than worker 1 had written"}},
		{kind: KindNoExpiry, ops: []history.Op{ttl(acq(1, "a1", ok, 0, 1), 0)},
			facts: []string{"Worker 1's acquire got OK at 0.00 s and sent no lease"}},
		{kind: KindStuck, ops: []history.Op{acq(1, "a1", ok, 0, 1), rel(1, "a1", ok, 100, 101), acq(2, "", fail, 200, 201), acq(3, "", fail, 1150, 1151)},
			facts: []string{"lock:{a} stayed taken", "worker 3's acquire was refused at 1.15 s", "expires with its last lease"}},
		{kind: KindLostLock, ops: []history.Op{acq(1, "a1", ok, 0, 1), ext(1, "a1", fail, 500, 501)},
			facts: []string{"Worker 1's extend was refused at 0.50 s: the lock was gone"}},
		{kind: KindRejected, ops: []history.Op{acq(1, "a1", ok, 0, 1), failErr(rel(1, "a1", fail, 50, 51), "ERR unknown command 'DELIFEQ'")},
			facts: []string{`Worker 1's release got the error "ERR unknown command 'DELIFEQ'" at 0.05 s`, "does not understand the command"}},
		{kind: KindLateGrant, redlock: true, ops: []history.Op{acq(1, "a1", ok, 0, 1500), rel(1, "a1", ok, 1600, 1601)},
			facts: []string{"Worker 1's acquire was called at 0.00 s asking for 1000 ms, and said OK at 1.50 s, 500.0 ms after", "validity check"}},
		{kind: KindWrongLease, ops: []history.Op{acq(1, "a1", ok, 0, 1), ext(1, "a1", ok, 600, 601), observe(400, "a1", 603, 604), rel(1, "a1", ok, 700, 701)},
			facts: []string{"Worker 1's extend got OK at 0.60 s, asking for 1000 ms", "found its token with 400 ms left"}},
		{kind: KindIllegalFence, ops: []history.Op{fenced(acq(1, "a1", ok, 0, 1), 5), rel(1, "a1", ok, 10, 11), fenced(acq(2, "b1", ok, 20, 21), 3)},
			facts: []string{"No one order of the fence-counter operations on lock:{a}"}},
		{kind: KindFenceNotIncreasing, ops: []history.Op{write(1, "a1", 5, ok, 10, 11), write(2, "b1", 3, ok, 20, 21)},
			facts: []string{"worker 1's write with fence 5 at 0.01 s, then worker 2's write with fence 3 at 0.02 s"}},
		{kind: KindStaleWrite, ops: []history.Op{fenced(acq(1, "a1", ok, 0, 1), 5), fenced(acq(2, "b1", ok, 1100, 1101), 6), write(1, "a1", 5, ok, 1200, 1201)},
			facts: []string{"Worker 2's acquire got OK at 1.10 s with fence 6", "worker 1's write with the older fence 5 was accepted at 1.20 s", "allowed"}},
		{kind: KindDuplicateFence, ops: []history.Op{fenced(acq(1, "a1", ok, 0, 1), 5), rel(1, "a1", ok, 10, 11), fenced(acq(2, "b1", ok, 20, 21), 5)},
			facts: []string{"Worker 1's acquire got OK at 0.00 s with fence 5, and worker 2's acquire got OK at 0.02 s with the same fence", "one counter that never goes back"}},
		{kind: KindWriteOverHolder, ops: []history.Op{fenced(acq(1, "a1", ok, 0, 1), 5), write(2, "", 6, ok, 100, 101), rel(1, "a1", ok, 500, 501)},
			facts: []string{"Worker 1 held lock:{a} with fence 5 from 0.00 s", "worker 2's write with the bigger fence 6 was accepted at 0.10 s"}},
	}
	seen := map[FindingKind]bool{}
	for _, tc := range cases {
		t.Run(string(tc.kind), func(t *testing.T) {
			h := hist(tc.ops...)
			h.Faults = tc.faults
			if tc.redlock {
				h.Meta.Topology = "redlock"
			}
			r, err := Run(context.Background(), h, OptionsFor(h))
			if err != nil {
				t.Fatal(err)
			}
			f := findKind(r, tc.kind)
			if f == nil {
				t.Fatalf("no %s finding in %s", tc.kind, r.Summary)
			}
			for _, fact := range tc.facts {
				if !strings.Contains(f.Explanation, fact) {
					t.Errorf("explanation lacks %q:\n%s", fact, f.Explanation)
				}
			}
			seen[tc.kind] = true
		})
	}
	// the linearizability check's undecided kinds, which no small
	// history reaches, from their findings
	for _, k := range []FindingKind{KindTimeout, KindUndecided} {
		f := &Finding{Kind: k, Key: "lock:{a}", Start: 1e9, End: 2e9, Summary: "porcupine ran out of time"}
		if e := Explain(f, []history.Fault{kill}, ""); !strings.Contains(e, "could not decide the operations on lock:{a} between 1.00 s and 2.00 s") || !strings.Contains(e, "Not a failure") {
			t.Errorf("%s: %s", k, e)
		}
		seen[k] = true
	}
	for k := range explainers {
		if !seen[k] {
			t.Errorf("finding kind %s has an explainer but no case here", k)
		}
	}
	// every kind the package declares (findingkind.go, or a check's own
	// file) has an explainer
	fs := token.NewFileSet()
	sources, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	declared := 0
	for _, src := range sources {
		if strings.HasSuffix(src, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(fs, src, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(file, func(n ast.Node) bool {
			if vs, okSpec := n.(*ast.ValueSpec); okSpec {
				if id, isIdent := vs.Type.(*ast.Ident); isIdent && id.Name == "FindingKind" {
					for _, v := range vs.Values {
						lit := v.(*ast.BasicLit)
						declared++
						if _, has := explainers[FindingKind(strings.Trim(lit.Value, `"`))]; !has {
							t.Errorf("finding kind %s has no explainer", lit.Value)
						}
					}
				}
			}
			return true
		})
	}
	if declared != len(explainers) {
		t.Errorf("%d finding kinds declared, %d explained", declared, len(explainers))
	}
}

// findKind is the first finding of kind in r.
func findKind(r *Result, kind FindingKind) *Finding {
	for i := range r.Checks {
		for j := range r.Checks[i].Findings {
			if f := &r.Checks[i].Findings[j]; f.Kind == kind {
				return f
			}
		}
	}
	return nil
}
