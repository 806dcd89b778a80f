package checker

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/anishathalye/porcupine"

	"github.com/lockcheck/lockcheck/history"
)

// wholeHistory checks every key's history as one porcupine partition: no
// segments, no greedy search. It is the yardstick for segmentation.
func wholeHistory(t testing.TB, h *history.History, opts Options) porcupine.CheckResult {
	opts, err := opts.withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	m := &model{loss: newLossWindows(h, h.End(), opts), counterLoss: newCounterLoss(h, h.End(), opts), tol: int64(opts.ClockTolerance)}
	pm := m.porcupineModel()
	var parts [][]porcupine.Operation
	for _, k := range groupByKey(h, len(h.Ops)) {
		k.prepare(h, nil)
		if len(k.lock) > 0 {
			b := lockBegin(k.lock, nil)
			parts = append(parts, porcupineOps(h, &b, nil, k.lock, k.name))
		}
		if len(k.fence) > 0 {
			seg := segment{fence: math.MinInt64}
			b := fenceBegin(&seg, k.fence)
			parts = append(parts, porcupineOps(h, &b, nil, k.fence, k.name))
		}
	}
	var all []porcupine.Operation
	for _, p := range parts {
		all = append(all, p...)
	}
	pm.Partition = func(ops []porcupine.Operation) [][]porcupine.Operation { return parts }
	return porcupine.CheckOperationsTimeout(pm, all, 0)
}

// randomHistory is a short history over a few keys: random operations
// whose outcomes a simulated correct server decides at a random instant
// inside each operation, then, half of the time, one operation corrupted,
// so that legal and illegal histories both come up often.
func randomHistory(rng *rand.Rand, withLoss bool) *history.History {
	h := &history.History{}
	type exec struct {
		at float64
		i  int
	}
	for k := range 1 + rng.IntN(2) {
		key := fmt.Sprintf("k%d", k)
		var tokens []string
		var order []exec
		start := len(h.Ops)
		t := 0.0
		for i := range 4 + rng.IntN(10) {
			w := 1 + rng.IntN(3)
			t += rng.Float64() * 8
			d := rng.Float64() * 3
			var op history.Op
			switch r := rng.IntN(10); {
			case r < 4 || len(tokens) == 0:
				tok := fmt.Sprintf("%s-%d", key, i)
				tokens = append(tokens, tok)
				op = acq(w, tok, history.Fail, t, t+d)
			case r < 6:
				op = ext(w, tokens[rng.IntN(len(tokens))], history.Fail, t, t+d)
			case r < 9:
				op = rel(w, tokens[rng.IntN(len(tokens))], history.Fail, t, t+d)
			default:
				op = observe(0, tokens[rng.IntN(len(tokens))], t, t+d)
			}
			if op.TTLms > 0 {
				op.TTLms = int64(5 + rng.IntN(25))
			}
			op.Key = key
			h.Ops = append(h.Ops, op)
			order = append(order, exec{t + rng.Float64()*d, len(h.Ops) - 1})
		}
		// the server, in the order commands reach it
		for i := 1; i < len(order); i++ {
			for j := i; j > 0 && order[j].at < order[j-1].at; j-- {
				order[j], order[j-1] = order[j-1], order[j]
			}
		}
		holder, deadline, counter := "", 0.0, int64(0)
		for _, e := range order {
			op := &h.Ops[e.i]
			lost := op.Kind != history.Observe && rng.IntN(12) == 0
			if lost && rng.IntN(2) == 0 {
				op.Outcome = history.Unknown // never reached the server
				continue
			}
			if holder != "" && e.at > deadline {
				holder = ""
			}
			done := false
			switch op.Kind {
			case history.Acquire:
				counter++
				if holder == "" {
					holder, deadline, done = op.Token, e.at+float64(op.TTLms), true
					if rng.IntN(3) > 0 {
						op.Fence, op.HasFence = counter, true
					}
				}
			case history.Extend:
				if holder == op.Token {
					deadline, done = e.at+float64(op.TTLms), true
				}
			case history.Release:
				if holder == op.Token {
					holder, done = "", true
				}
			case history.Observe:
				if holder == "" {
					op.Read, op.Token = -2, ""
				} else {
					op.Read, op.Token = int64(deadline-e.at), holder
				}
				done = true
			}
			if done {
				op.Outcome = history.OK
			}
			if lost {
				op.Outcome, op.Fence, op.HasFence = history.Unknown, 0, false
			}
		}
		if rng.IntN(2) == 0 { // corrupt one operation
			op := &h.Ops[start+rng.IntN(len(h.Ops)-start)]
			switch {
			case op.Kind == history.Observe:
				op.Read = []int64{-2, 3, 20}[rng.IntN(3)]
			case op.Outcome == history.OK:
				op.Outcome, op.Fence, op.HasFence = history.Fail, 0, false
			case op.Outcome == history.Fail:
				op.Outcome = history.OK
				if op.Kind == history.Acquire {
					op.Fence, op.HasFence = int64(rng.IntN(6)), true
				}
			}
		}
	}
	for i := range h.Ops {
		if h.Ops[i].Outcome == history.Unknown {
			h.Ops[i].Return += 20e6 // the harness gives up later
		}
	}
	if withLoss && rng.IntN(2) == 0 {
		s := rng.Float64() * 40
		h.Faults = append(h.Faults, fault("kill-primary", s, s+rng.Float64()*10))
	}
	h.Sort()
	return h
}

// TestSegmentsAgreeWithWholeHistory checks that cutting histories into
// segments and trying the greedy order first changes no verdict: Run's
// linearizability against porcupine on each key's whole history. Where the
// cut rule's assumptions make the segments stricter (a late unknown acquire,
// a fault that leaves the model not knowing the key) only the direction
// that matters for false alarms is checked.
func TestSegmentsAgreeWithWholeHistory(t *testing.T) {
	agreementRuns := 3000
	if testing.Short() {
		agreementRuns = 300
	}
	rng := rand.New(rand.NewPCG(7, 11))
	opts := Options{ClockTolerance: 1e6, FaultGrace: 2e6} // PTTL is in whole ms
	legal, illegal, stricter, looser := 0, 0, 0, 0
	for n := range agreementRuns {
		h := randomHistory(rng, n%2 == 1)
		res, err := Run(context.Background(), h, opts)
		if err != nil {
			t.Fatal(err)
		}
		lin, _ := res.Check(Linearizability)
		whole := wholeHistory(t, h, opts)
		unknownAcquire, faults := false, len(h.Faults) > 0
		for _, op := range h.Ops {
			unknownAcquire = unknownAcquire || (op.Kind == history.Acquire && op.Outcome == history.Unknown)
		}
		if whole == porcupine.Ok {
			legal++
		} else {
			illegal++
		}
		if whole == porcupine.Ok && lin.Status != Pass {
			stricter++
		}
		if whole == porcupine.Illegal && lin.Status == Pass {
			looser++
		}
		switch {
		case whole == porcupine.Ok && lin.Status != Pass && !faults:
			t.Fatalf("history %d: whole history legal, segments say %s: %s\n%s", n, lin.Status, lin.Summary, dumpHistory(h))
		case whole == porcupine.Illegal && lin.Status == Pass && !unknownAcquire:
			t.Fatalf("history %d: whole history illegal, segments pass\n%s", n, dumpHistory(h))
		}
	}
	t.Logf("%d legal, %d illegal; segments stricter on %d (faults), looser on %d (late unknown acquires)", legal, illegal, stricter, looser)
	if legal < agreementRuns/10 || illegal < agreementRuns/10 {
		t.Errorf("too few of one kind: %d legal, %d illegal", legal, illegal)
	}
}

func dumpHistory(h *history.History) string {
	s := ""
	for i, op := range h.Ops {
		s += fmt.Sprintf("  %d %s w%d %s %s %s ttl=%d fence=%d/%v read=%d [%.3f, %.3f]\n", i, op.Key, op.Worker, op.Kind, op.Token,
			op.Outcome, op.TTLms, op.Fence, op.HasFence, op.Read, float64(op.Call)/1e6, float64(op.Return)/1e6)
	}
	for _, f := range h.Faults {
		s += fmt.Sprintf("  fault %s [%.3f, %.3f]\n", f.Name, float64(f.Start)/1e6, float64(f.End)/1e6)
	}
	return s
}
