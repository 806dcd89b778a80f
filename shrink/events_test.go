package shrink

import (
	"reflect"
	"testing"
	"time"

	"github.com/lockcheck/lockcheck/checker"
	"github.com/lockcheck/lockcheck/history"
	"github.com/lockcheck/lockcheck/scenarios"
)

// TestTraceEvents: the first script of a double holder holds the two
// holds' acquires, the calls on the key that may have changed the lock
// since a lease before the first (not the refused ones, nor writes, nor
// other keys, nor anything after the finding), the acquire whose token a
// kept release uses even when it came earlier, and the fault windows that
// started before the finding ended (not a holder's pause, which a script
// plays as a delay); the wide one every call on the key
// that was not refused.
func TestTraceEvents(t *testing.T) {
	s := func(v float64) int64 { return int64(v * float64(time.Second)) }
	h := &history.History{Ops: []history.Op{
		0: {Worker: 0, Key: "k", Kind: history.Acquire, Token: "a", Outcome: history.OK, Call: s(0.1), Return: s(0.11)},
		1: {Worker: 1, Key: "k", Kind: history.Acquire, Outcome: history.Fail, Call: s(0.5), Return: s(0.51)},
		2: {Worker: 2, Key: "k", Kind: history.Acquire, Token: "c", Outcome: history.OK, Call: s(2.0), Return: s(2.01)},
		3: {Worker: 2, Key: "k", Kind: history.Write, Outcome: history.OK, Call: s(2.1), Return: s(2.1)},
		4: {Worker: 0, Key: "k", Kind: history.Release, Token: "a", Outcome: history.OK, Call: s(2.2), Return: s(2.21)},
		5: {Worker: 1, Key: "other", Kind: history.Acquire, Token: "x", Outcome: history.OK, Call: s(2.3), Return: s(2.31)},
		6: {Worker: 1, Key: "k", Kind: history.Acquire, Token: "b", Outcome: history.OK, Call: s(2.4), Return: s(2.41)},
		7: {Worker: 2, Key: "k", Kind: history.Release, Token: "c", Outcome: history.OK, Call: s(3.5), Return: s(3.51)},
		8: {Worker: 3, Key: "k", Kind: history.Extend, Token: "d", Outcome: history.Unknown, Call: s(0.2), Return: s(0.3)},
	}, Faults: []history.Fault{{Name: "clock-jump", Start: s(1), End: s(1.5)}, {Name: "clock-jump", Start: s(4), End: s(4.5)}, {Name: "pause-client", Start: s(1.2), End: s(2.5)}}}
	f := checker.Finding{Kind: checker.KindDoubleHolder, Key: "k", Start: s(2.41), End: s(3),
		Holds: []checker.Hold{{Worker: 2, Acquire: 2}, {Worker: 1, Acquire: 6}}}
	core, narrow, wide := traceEvents(h, f, string(checker.KindDoubleHolder), time.Second)
	if want := map[int]bool{2: true, 6: true}; !reflect.DeepEqual(core, want) {
		t.Errorf("core %v, want %v", core, want)
	}
	op, fault := scenarios.OpEvent, scenarios.FaultEvent
	if want := []scenarios.TraceEvent{op(0), op(2), op(4), op(6), fault(0)}; !reflect.DeepEqual(narrow, want) {
		t.Errorf("narrow %+v\nwant %+v", narrow, want)
	}
	if want := []scenarios.TraceEvent{op(0), op(2), op(4), op(6), op(8), fault(0)}; !reflect.DeepEqual(wide, want) {
		t.Errorf("wide %+v\nwant %+v", wide, want)
	}
	if !givesToken(h, narrow, 0) || givesToken(h, narrow, 1) {
		t.Errorf("worker 0's acquire gives its release a token, worker 2's gives nothing kept")
	}
	// a lost increment keeps the writes
	f.Kind = checker.KindLostIncrement
	_, narrow, _ = traceEvents(h, f, string(checker.KindLostIncrement), time.Second)
	if len(narrow) != 6 || narrow[2] != op(3) {
		t.Errorf("a resource finding's script %+v: want worker 2's write in it", narrow)
	}
}
