package scenarios

import (
	"cmp"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"time"

	"github.com/lockcheck/lockcheck/history"
	"github.com/lockcheck/lockcheck/history/historyjson"
)

// Trace is a reproducer in script form: only the lock calls, resource
// writes, reads and fault steps of a recorded run that its violation
// needs, replayed one after the other by a Script (Play). A randomized
// run shows a race when its many workers happen to line it up; a trace
// lines up the few steps that mattered, each as long after the event it
// followed (the previous step's return, or a fault's start, promotion or
// end) as it came in the recorded run. It is what a bug report quotes.
type Trace struct {
	Format int `json:"format"`
	// Scenario gives the builds, topology, client and its settings, and
	// the lease; its workload settings are not used.
	Scenario Scenario `json:"scenario"`
	// Key is the one key every step is about.
	Key     string      `json:"key"`
	Workers int         `json:"workers"`
	Steps   []TraceStep `json:"steps"`
}

// TraceFormat is the version of trace.json.
const TraceFormat = 1

// TraceFileName is a trace's file in its run folder.
const TraceFileName = "trace.json"

// TraceStep is one step of a trace.
type TraceStep struct {
	// Kind is acquire, extend, release, write, observe or fault.
	Kind StepKind `json:"kind"`
	// Worker runs a call, write or read (0-based, in the order the
	// workers first appear); Fault names a fault step.
	Worker int    `json:"worker"`
	Fault  string `json:"fault,omitempty"`
	// After is the event the step waits for, and DelayMs how long after
	// it the step begins; FaultStep is the index of the fault step whose
	// event it is.
	After     Anchor `json:"after"`
	FaultStep int    `json:"fault_step,omitempty"`
	DelayMs   int64  `json:"delay_ms"`
	// Granted says the recorded acquire took the lock: while the replay's
	// is answered with an error or not at all (a failover under way), it
	// is tried again every 50 ms within one lease; a refusal stands.
	Granted bool `json:"granted,omitempty"`
	// PauseMs freezes the call inside, after its command (between the
	// two of an operation that takes two), for that long: in the run it
	// took far longer than a command takes, a client frozen inside it.
	PauseMs int64 `json:"pause_ms,omitempty"`
}

// frozenInside is how much longer than a command a lock call must have
// taken for its trace step to freeze inside it: a server answers in
// well under it, and the workload's pauses are longer.
const frozenInside = 100 * time.Millisecond

// StepKind is what a trace step does.
type StepKind string

// The steps a trace takes.
const (
	StepAcquire StepKind = "acquire"
	StepExtend  StepKind = "extend"
	StepRelease StepKind = "release"
	StepWrite   StepKind = "write"
	StepObserve StepKind = "observe"
	StepFault   StepKind = "fault"
)

// Anchor is the event a trace step follows: the previous step's return,
// or its call when the step began while the previous one was in flight
// (each worker plays its steps in a goroutine of its own), or a fault
// step's start, promotion or end.
type Anchor string

// The events a step can follow.
const (
	AfterPrevious      Anchor = "previous"
	AfterPreviousCall  Anchor = "previous-call"
	AfterFaultStart    Anchor = "fault-start"
	AfterFaultPromoted Anchor = "fault-promoted"
	AfterFaultEnd      Anchor = "fault-end"
)

// TraceEvent is one recorded operation or fault window a trace can be
// made of: an index into the history's Ops or Faults.
type TraceEvent struct {
	Op    int  `json:"op"`
	Fault int  `json:"fault"`
	IsOp  bool `json:"is_op"`
	// AtOnce drops the step's recorded delay: it begins as soon as the
	// event it follows happened; Unfrozen drops its freeze inside the
	// call (a shrink's cuts).
	AtOnce   bool `json:"at_once,omitempty"`
	Unfrozen bool `json:"unfrozen,omitempty"`
}

// OpEvent and FaultEvent name one operation or fault window of a history.
func OpEvent(i int) TraceEvent    { return TraceEvent{Op: i, IsOp: true} }
func FaultEvent(i int) TraceEvent { return TraceEvent{Fault: i} }

// At is when the event began in h.
func (e TraceEvent) At(h *history.History) int64 {
	if e.IsOp {
		return h.Ops[e.Op].Call
	}
	return h.Faults[e.Fault].Start
}

// NewTrace makes the trace of events (operations on key and fault
// windows of h) in the order they began. The first step begins at once;
// a step that began while the previous one was in flight begins as long
// after the previous one began; each later one follows the latest
// event before it began: the previous step's return, or the start,
// promotion or end of a fault step before it; a step that began while the
// previous one was in flight follows it at once. Workers are numbered in
// the order they first appear.
func NewTrace(s Scenario, h *history.History, key string, events []TraceEvent) (Trace, error) {
	for _, e := range events {
		if e.IsOp && (e.Op < 0 || e.Op >= len(h.Ops)) {
			return Trace{}, fmt.Errorf("trace: no operation %d", e.Op)
		}
		if !e.IsOp && (e.Fault < 0 || e.Fault >= len(h.Faults)) {
			return Trace{}, fmt.Errorf("trace: no fault window %d", e.Fault)
		}
	}
	evs := slices.Clone(events)
	SortEvents(h, evs)
	tr := Trace{Format: TraceFormat, Scenario: s, Key: key}
	workers := map[int]int{}
	var prevCall, prevReturn int64
	var faults []int // the trace's fault steps, by index into h.Faults
	for _, e := range evs {
		at := e.At(h)
		st := TraceStep{After: AfterPrevious, DelayMs: max(at-prevReturn, 0) / 1e6}
		anchor := prevReturn
		if len(tr.Steps) > 0 && at < prevReturn {
			// began while the previous step was in flight
			st.After, st.DelayMs, anchor = AfterPreviousCall, max(at-prevCall, 0)/1e6, prevCall
		}
		for k, fi := range faults {
			f := h.Faults[fi]
			for _, ev := range []struct {
				t int64
				a Anchor
			}{{f.Start, AfterFaultStart}, {f.PromotedAt, AfterFaultPromoted}, {f.End, AfterFaultEnd}} {
				if ev.t > 0 && ev.t <= at && ev.t > anchor {
					anchor, st.After, st.FaultStep, st.DelayMs = ev.t, ev.a, stepIndexOfFault(tr.Steps, k), (at-ev.t)/1e6
				}
			}
		}
		// nothing the trace does comes before its first step: it begins
		// at once
		if e.AtOnce || len(tr.Steps) == 0 {
			st.DelayMs = 0
		}
		if !e.IsOp {
			st.Kind, st.Fault = StepFault, h.Faults[e.Fault].Name
			faults = append(faults, e.Fault)
			tr.Steps = append(tr.Steps, st)
			prevCall, prevReturn = at, at
			continue
		}
		op := h.Ops[e.Op]
		if op.Key != key {
			return Trace{}, fmt.Errorf("trace: operation %d is on %s, not %s", e.Op, op.Key, key)
		}
		kind, ok := stepKinds[op.Kind]
		if !ok {
			return Trace{}, fmt.Errorf("trace: operation %d is a %s, which a trace does not replay", e.Op, op.Kind)
		}
		st.Kind = kind
		if kind != StepObserve {
			w, seen := workers[op.Worker]
			if !seen {
				w = len(workers)
				workers[op.Worker] = w
			}
			st.Worker = w
		}
		st.Granted = kind == StepAcquire && op.Outcome == history.OK
		if took := time.Duration(op.Return - op.Call); lockKinds[kind] && op.Outcome != history.Unknown && took >= frozenInside && !e.Unfrozen {
			st.PauseMs = took.Milliseconds()
		}
		tr.Steps = append(tr.Steps, st)
		prevCall, prevReturn = at, op.Return
	}
	tr.Workers = max(len(workers), 1)
	return tr, nil
}

// stepKinds are the operations a trace replays, by the step that does.
var stepKinds = map[history.Kind]StepKind{
	history.Acquire: StepAcquire, history.Extend: StepExtend, history.Release: StepRelease,
	history.Write: StepWrite, history.Observe: StepObserve,
}

// lockKinds are the steps that are lock calls, which a client can be
// frozen inside.
var lockKinds = map[StepKind]bool{StepAcquire: true, StepExtend: true, StepRelease: true}

// stepIndexOfFault is the index in steps of the k-th fault step.
func stepIndexOfFault(steps []TraceStep, k int) int {
	n := 0
	for i, st := range steps {
		if st.Kind == StepFault {
			if n == k {
				return i
			}
			n++
		}
	}
	return -1
}

// SortEvents puts events in the order they began in h: the order of a
// trace's steps.
func SortEvents(h *history.History, evs []TraceEvent) {
	slices.SortStableFunc(evs, func(a, b TraceEvent) int { return cmp.Compare(a.At(h), b.At(h)) })
}

// String is the trace in a few words per step, for a bug report.
func (st TraceStep) String() string {
	what := fmt.Sprintf("worker %d %s", st.Worker, st.Kind)
	switch st.Kind {
	case StepFault:
		what = "fault " + st.Fault
	case StepObserve:
		what = "read the key's PTTL"
	case StepAcquire:
		if st.Granted {
			what += " (retried through errors)"
		}
	}
	if st.PauseMs > 0 {
		what += fmt.Sprintf(", frozen inside for %d ms", st.PauseMs)
	}
	if st.After == AfterPrevious && st.DelayMs == 0 {
		return what + ", at once"
	}
	after := "after the previous step"
	if st.After == AfterPreviousCall {
		after = "after the previous step began"
	} else if st.After != AfterPrevious {
		after = fmt.Sprintf("after step %d's %s", st.FaultStep+1, st.After[len("fault-"):])
	}
	return fmt.Sprintf("%s, %d ms %s", what, st.DelayMs, after)
}

// Describe is the trace's steps in words, one line each.
func (tr Trace) Describe() []string {
	out := make([]string, len(tr.Steps))
	for i, st := range tr.Steps {
		out[i] = fmt.Sprintf("%d. %s", i+1, st)
	}
	return out
}

// Save writes the trace as indented JSON.
func (tr Trace) Save(path string) error {
	b, err := json.MarshalIndent(tr, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}

// LoadTrace reads a trace.json.
func LoadTrace(path string) (Trace, error) {
	jf, err := historyjson.ReadJSONFile(path)
	if err != nil {
		return Trace{}, err
	}
	var head struct {
		Format int `json:"format"`
	}
	if err := jf.Decode(&head); err != nil {
		return Trace{}, err
	}
	if head.Format > TraceFormat {
		return Trace{}, fmt.Errorf("%s has trace format %d; this lockcheck reads up to %d: use a newer lockcheck", path, head.Format, TraceFormat)
	}
	if head.Format != TraceFormat {
		return Trace{}, fmt.Errorf("%s has trace format %d; this lockcheck reads %d: use the lockcheck that wrote it", path, head.Format, TraceFormat)
	}
	var tr Trace
	if err := jf.Decode(&tr); err != nil {
		return Trace{}, err
	}
	if err := tr.Validate(); err != nil {
		return Trace{}, fmt.Errorf("%s: %w", path, err)
	}
	return tr, nil
}

// Validate says what is wrong with a trace, in one line.
func (tr Trace) Validate() error {
	if tr.Key == "" || len(tr.Steps) == 0 {
		return fmt.Errorf("trace: no key or no step")
	}
	for i, st := range tr.Steps {
		if _, ok := map[StepKind]bool{StepAcquire: true, StepExtend: true, StepRelease: true, StepWrite: true, StepObserve: true, StepFault: true}[st.Kind]; !ok {
			return fmt.Errorf("trace: step %d: unknown kind %q", i+1, st.Kind)
		}
		if st.Worker < 0 || st.Worker >= tr.Workers {
			return fmt.Errorf("trace: step %d: worker %d of %d", i+1, st.Worker, tr.Workers)
		}
		if st.After != AfterPrevious && st.After != AfterPreviousCall && (st.FaultStep < 0 || st.FaultStep >= i || tr.Steps[st.FaultStep].Kind != StepFault) {
			return fmt.Errorf("trace: step %d follows step %d, which is no fault step before it", i+1, st.FaultStep+1)
		}
	}
	// a trace is where its scenario enters a run
	_, err := tr.Scenario.Resolve()
	return err
}
