package scenarios

import (
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/lockcheck/lockcheck/history"
	"github.com/lockcheck/lockcheck/topology"
)

// failoverHistory is a failover race as a run records it: worker 7
// takes the lock on the primary alone, kill-primary's window opened
// before it (at 0.5 s) and saw a replica promoted at 3 s, worker 3 is
// refused during the failover and granted 50 ms after the promotion.
func failoverHistory() *history.History {
	ms := func(v float64) int64 { return int64(v * float64(time.Millisecond)) }
	return &history.History{
		Ops: []history.Op{
			{Worker: 7, Key: "k", Kind: history.Acquire, Token: "a", Outcome: history.OK, Call: ms(1000), Return: ms(1010)},
			{Worker: 3, Key: "k", Kind: history.Acquire, Outcome: history.Fail, Call: ms(2000), Return: ms(2001)},
			{Worker: 3, Key: "other", Kind: history.Acquire, Outcome: history.OK, Call: ms(2500), Return: ms(2501)},
			{Worker: 3, Key: "k", Kind: history.Acquire, Token: "b", Outcome: history.OK, Call: ms(3050), Return: ms(3060)},
			{Worker: 7, Key: "k", Kind: history.Release, Token: "a", Outcome: history.Fail, Call: ms(4000), Return: ms(4002)},
		},
		Faults: []history.Fault{{Name: "kill-primary", Start: ms(500), PromotedAt: ms(3000), Promoted: "n2", End: ms(6000)}},
	}
}

// TestNewTrace: steps in the order they began, workers numbered as they
// first appear, the first step at once, and each later step timed from
// the latest event before it: the previous return, or the promotion of
// the fault step before it.
func TestNewTrace(t *testing.T) {
	h := failoverHistory()
	s := Scenario{ServerSettings: ServerSettings{Server: "valkey-9.1", Topology: topology.Sentinel}, ClientSettings: ClientSettings{Client: "native"}, TrafficSettings: TrafficSettings{TTL: 5 * time.Second}}
	tr, err := NewTrace(s, h, "k", []TraceEvent{OpEvent(3), OpEvent(0), FaultEvent(0), OpEvent(4)})
	if err != nil {
		t.Fatal(err)
	}
	want := []TraceStep{
		{Kind: StepFault, Fault: "kill-primary", After: AfterPrevious, DelayMs: 0},
		{Kind: StepAcquire, Worker: 0, After: AfterPrevious, DelayMs: 500, Granted: true},
		{Kind: StepAcquire, Worker: 1, After: AfterFaultPromoted, FaultStep: 0, DelayMs: 50, Granted: true},
		{Kind: StepRelease, Worker: 0, After: AfterPrevious, DelayMs: 940},
	}
	if !reflect.DeepEqual(tr.Steps, want) {
		t.Fatalf("steps:\n%+v\nwant\n%+v", tr.Steps, want)
	}
	if tr.Workers != 2 || tr.Key != "k" {
		t.Errorf("%d workers on %s, want 2 on k", tr.Workers, tr.Key)
	}
	lines := strings.Join(tr.Describe(), "\n")
	for _, w := range []string{"1. fault kill-primary, at once", "3. worker 1 acquire (retried through errors), 50 ms after step 1's promoted"} {
		if !strings.Contains(lines, w) {
			t.Errorf("described as\n%s\nwant a line with %q", lines, w)
		}
	}

	// begun at once: the release follows the acquire before it with no delay
	evs := []TraceEvent{FaultEvent(0), OpEvent(0), OpEvent(3), {Op: 4, IsOp: true, AtOnce: true}}
	if tr, err = NewTrace(s, h, "k", evs); err != nil {
		t.Fatal(err)
	}
	if got := tr.Steps[3].DelayMs; got != 0 {
		t.Errorf("a step begun at once waits %d ms", got)
	}

	for _, bad := range [][]TraceEvent{{OpEvent(2)}, {OpEvent(9)}, {FaultEvent(1)}} {
		if _, err := NewTrace(s, h, "k", bad); err == nil {
			t.Errorf("%+v: no error for an operation on another key or an event the history lacks", bad)
		}
	}
}

// TestTraceSaveLoad: trace.json reads back as written, and a trace that
// names a worker it lacks, or follows a step that is no fault, is refused
// in one line.
func TestTraceSaveLoad(t *testing.T) {
	s := Scenario{ServerSettings: ServerSettings{Server: "valkey-9.1", Topology: topology.Sentinel}, ClientSettings: ClientSettings{Client: "native"}, TrafficSettings: TrafficSettings{TTL: 5 * time.Second}}.WithDefaults()
	tr, err := NewTrace(s, failoverHistory(), "k", []TraceEvent{FaultEvent(0), OpEvent(0), OpEvent(3)})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), TraceFileName)
	if err := tr.Save(path); err != nil {
		t.Fatal(err)
	}
	back, err := LoadTrace(path)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back.Steps, tr.Steps) || back.Key != tr.Key || back.Scenario.TTL != tr.Scenario.TTL || back.Scenario.Topology != tr.Scenario.Topology {
		t.Errorf("read back %+v\nwrote %+v", back, tr)
	}
	worker := tr
	worker.Steps = append([]TraceStep(nil), tr.Steps...)
	worker.Steps[1].Worker = 5
	anchor := tr
	anchor.Steps = append([]TraceStep(nil), tr.Steps...)
	anchor.Steps[2].FaultStep = 1
	for _, bad := range []Trace{worker, anchor} {
		err := bad.Validate()
		if err == nil || strings.Contains(err.Error(), "\n") {
			t.Errorf("Validate: %v, want one line", err)
		}
	}
}

// TestNewTraceFrozenInside: a call that took far longer than a command is
// frozen inside for as long when played, and a step that began while it
// was in flight follows its call, not its return; a shrink's cut can
// drop the freeze.
func TestNewTraceFrozenInside(t *testing.T) {
	ms := func(v float64) int64 { return int64(v * float64(time.Millisecond)) }
	h := &history.History{Ops: []history.Op{
		{Worker: 4, Key: "k", Kind: history.Acquire, Token: "t", Outcome: history.OK, Call: ms(13), Return: ms(1680)},
		{Worker: 3, Key: "k", Kind: history.Acquire, Token: "t", Outcome: history.OK, Call: ms(1153), Return: ms(1154)},
		{Worker: 4, Key: "k", Kind: history.Extend, Token: "t", Outcome: history.OK, Call: ms(2131), Return: ms(2132)},
	}}
	s := Scenario{ServerSettings: ServerSettings{Server: "valkey-9.1"}, ClientSettings: ClientSettings{Client: "mutant-shared-token"}, TrafficSettings: TrafficSettings{TTL: time.Second}}
	tr, err := NewTrace(s, h, "k", []TraceEvent{OpEvent(0), OpEvent(1), OpEvent(2)})
	if err != nil {
		t.Fatal(err)
	}
	want := []TraceStep{
		{Kind: StepAcquire, Worker: 0, After: AfterPrevious, Granted: true, PauseMs: 1667},
		{Kind: StepAcquire, Worker: 1, After: AfterPreviousCall, DelayMs: 1140, Granted: true},
		{Kind: StepExtend, Worker: 0, After: AfterPrevious, DelayMs: 977},
	}
	if !reflect.DeepEqual(tr.Steps, want) {
		t.Fatalf("steps:\n%+v\nwant\n%+v", tr.Steps, want)
	}
	if err := tr.Validate(); err != nil {
		t.Error(err)
	}
	if tr, _ = NewTrace(s, h, "k", []TraceEvent{{Op: 0, IsOp: true, Unfrozen: true}, OpEvent(1)}); tr.Steps[0].PauseMs != 0 {
		t.Errorf("an unfrozen step still freezes for %d ms", tr.Steps[0].PauseMs)
	}
	if d := tr.Describe()[1]; d != "2. worker 1 acquire (retried through errors), 1140 ms after the previous step began" {
		t.Errorf("described as %q", d)
	}
}
