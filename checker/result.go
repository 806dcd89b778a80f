package checker

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/lockcheck/lockcheck/history"
)

func knownCheck(name string) bool {
	for _, n := range CheckNames {
		if n == name {
			return true
		}
	}
	return false
}

// Status is the outcome of one check.
type Status string

const (
	// Pass: nothing found.
	Pass Status = "pass"
	// Fail: something found that no correct server and client produce.
	Fail Status = "fail"
	// Unknown: the check could not decide (porcupine ran out of time). It is
	// never a pass.
	Unknown Status = "unknown"
	// Skipped: the check did not run (asked to skip, or nothing to check).
	Skipped Status = "skipped"
	// Allowed: findings the options permit; reported, not a violation
	// (double holders of a fenced client under failover, lost locks).
	Allowed Status = "allowed"
)

// Verdict is the outcome of a whole run.
type Verdict string

const (
	Safe     Verdict = "safe"
	Violated Verdict = "violated"
	// Undecided: no check failed but at least one could not decide.
	Undecided Verdict = "unknown"
)

// ExitCode is the process exit code of the verdict: 0 safe, 1 violated,
// 3 undecided, so that a script can tell them apart.
func (v Verdict) ExitCode() int {
	switch v {
	case Safe:
		return 0
	case Violated:
		return 1
	default:
		return 3
	}
}

// OpRef is an operation named in a finding, with its index in History.Ops.
type OpRef struct {
	Index int `json:"index"`
	history.Op
}

// Hold is the interval during which a client believed it held a lock: from
// its acquire's return until the earliest of its release's call, a failed
// extend's return and its own lease end (last acquire or successful extend
// call + TTL).
type Hold struct {
	Key      string `json:"key"`
	Client   int    `json:"client"`
	Worker   int    `json:"worker"`
	Token    string `json:"token,omitempty"`
	Fence    int64  `json:"fence,omitempty"`
	HasFence bool   `json:"has_fence,omitempty"`
	Start    int64  `json:"start"`
	End      int64  `json:"end"`
	// EndedBy says what ended the hold: "release", "extend-failed",
	// "lease" or "history-end".
	EndedBy string `json:"ended_by"`
	// Acquire is the index of the acquire in History.Ops.
	Acquire int `json:"acquire"`
	// Extend, when not 0, is the index of the OK extend that started this
	// hold after the worker's lease had ended: the client was told it held
	// again.
	Extend int `json:"extend,omitempty"`
}

// Finding is one thing a check found. Fields that do not apply are empty.
type Finding struct {
	// Kind is what was found (see FindingKind for the list).
	Kind    FindingKind `json:"kind"`
	Key     string      `json:"key"`
	Summary string      `json:"summary"`
	// Start and End bound the finding on the harness clock (ns).
	Start int64 `json:"start"`
	End   int64 `json:"end"`
	// OverlapMs is the length of a double holding.
	OverlapMs float64 `json:"overlap_ms,omitempty"`
	Holds     []Hold  `json:"holds,omitempty"`
	Ops       []OpRef `json:"ops,omitempty"`
	// Faults are the fault windows active during [Start, End].
	Faults []history.Fault `json:"faults,omitempty"`
	// Allowed findings are reported but do not fail the check.
	Allowed bool `json:"allowed,omitempty"`
	// Explanation is the finding in a few sentences (Explain): who held
	// or wrote, from which replies, which fault windows came between,
	// and which rule a correct lock would have kept.
	Explanation string `json:"explanation,omitempty"`
}

// Check is the outcome of one named check.
type Check struct {
	Name    string `json:"-"`
	Status  Status `json:"status"`
	Count   int    `json:"count"`
	Summary string `json:"summary"`
	// Findings lists up to Options.MaxFindings of the Count findings.
	Findings  []Finding `json:"findings,omitempty"`
	Truncated bool      `json:"truncated,omitempty"`
	// InWindows counts the failing findings (all of them, shown or not)
	// that overlap each fault window, by the window's start: what a
	// rolling upgrade's step table shows per step.
	InWindows map[int64]int `json:"in_windows,omitempty"`
}

// Checks is the list of checks of a Result. In JSON it is an object keyed
// by check name, in CheckNames order.
type Checks []Check

// Find returns the check called name.
func (cs Checks) Find(name string) (Check, bool) {
	for _, c := range cs {
		if c.Name == name {
			return c, true
		}
	}
	return Check{}, false
}

// Class is what a run shows at a glance: its verdict, with the fenced
// client's case told apart. The checker decides it once; reports, the
// matrix and the harness only read it.
type Class string

const (
	// ClassSafe: every check passed.
	ClassSafe Class = "safe"
	// ClassFenced: double holders were allowed and found, and the fence
	// check passed: the fence stopped the stale holder.
	ClassFenced Class = "fenced"
	// ClassStale: the resource check alone failed and no two workers
	// believed they held at once: an unfenced holder wrote after its lease
	// had ended (a stall, a pause), and its increment was lost. A correct
	// unfenced lock cannot prevent it; only a fence can (the article's
	// point). Its verdict stays violated.
	ClassStale Class = "stale-writes"
	// ClassViolated: at least one check failed.
	ClassViolated Class = "violated"
	// ClassUnknown: no check failed, one could not decide.
	ClassUnknown Class = "unknown"
)

// FailingKinds are the kinds of the failing findings of cs, sorted, each
// once: what a regression case or a shrunk reproducer must show again.
func (cs Checks) FailingKinds() []string {
	var out []string
	for _, c := range cs {
		if c.Status != Fail {
			continue
		}
		for _, f := range c.Findings {
			if k := string(f.Kind); !f.Allowed && !slices.Contains(out, k) {
				out = append(out, k)
			}
		}
	}
	slices.Sort(out)
	return out
}

// ClassOf classifies a verdict and its checks.
func ClassOf(v Verdict, checks Checks) Class {
	switch v {
	case Violated:
		if staleOnly(checks) {
			return ClassStale
		}
		return ClassViolated
	case Safe:
		dh, _ := checks.Find(DoubleHolder)
		fence, _ := checks.Find(Fence)
		if dh.Status == Allowed && dh.Count > 0 && fence.Status == Pass {
			return ClassFenced
		}
		return ClassSafe
	}
	return ClassUnknown
}

// staleOnly says whether the resource check is the only one that failed
// while the double-holder check passed: every lost increment then comes
// from a write made outside its writer's hold (two writes inside their
// writers' holds that interleave are two holds that overlap).
func staleOnly(checks Checks) bool {
	res, _ := checks.Find(Resource)
	dh, _ := checks.Find(DoubleHolder)
	if res.Status != Fail || dh.Status != Pass {
		return false
	}
	for _, c := range checks {
		if c.Name != Resource && (c.Status == Fail || c.Status == Unknown) {
			return false
		}
	}
	return true
}

// MarshalJSON writes the checks as one object keyed by name.
func (cs Checks) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, c := range cs {
		if i > 0 {
			b.WriteByte(',')
		}
		name, _ := json.Marshal(c.Name)
		body, err := json.Marshal(c)
		if err != nil {
			return nil, fmt.Errorf("encode check %s: %w", c.Name, err)
		}
		b.Write(name)
		b.WriteByte(':')
		b.Write(body)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// UnmarshalJSON reads the object MarshalJSON writes, in CheckNames order
// for known names and then the rest.
func (cs *Checks) UnmarshalJSON(b []byte) error {
	var m map[string]Check
	if err := json.Unmarshal(b, &m); err != nil {
		return fmt.Errorf("decode checks: %w", err)
	}
	*cs = (*cs)[:0]
	for _, n := range CheckNames {
		if c, ok := m[n]; ok {
			c.Name = n
			*cs = append(*cs, c)
			delete(m, n)
		}
	}
	for n, c := range m {
		c.Name = n
		*cs = append(*cs, c)
	}
	return nil
}

// Result is the checker's answer for one history.
type Result struct {
	Verdict  Verdict `json:"verdict"`
	ExitCode int     `json:"exit_code"`
	// Class tells a fenced client's stopped double holder from a plain
	// safe run (see Class).
	Class Class `json:"class"`
	// Summary is one line naming what decided the verdict.
	Summary string `json:"summary"`
	// NotReproduced says why the run's faults did not get to show
	// anything (ClassNotReproduced), when they did not.
	NotReproduced []string `json:"not_reproduced,omitempty"`
	Checks        Checks   `json:"checks"`
	// Ops, Keys and Segments say how much was checked; Porcupine counts
	// the segments the greedy search could not settle.
	Ops       int `json:"ops"`
	Keys      int `json:"keys"`
	Segments  int `json:"segments"`
	Porcupine int `json:"porcupine_segments"`
	// Options are the options the checks ran with, defaults filled in:
	// what a picture of the same history must use to agree.
	Options Options `json:"options"`
	// Picture is what porcupine's page draws, kept from the check's own
	// search (nil when the check was skipped or the picture turned off).
	Picture *Picture `json:"-"`
	// Holds are the hold intervals the timeline draws: of each key up to
	// ShownHolds, around its first finding that is not a lost lock, or its
	// first ones; HeldTotal counts each key's holds. Writes are the
	// resource writes inside each key's shown holds. What a report draws
	// is kept, not every hold: a long history's result stays small.
	Holds     []Hold         `json:"-"`
	HeldTotal map[string]int `json:"-"`
	Writes    []history.Op   `json:"-"`
	// Notice is how long holders went on after losing a lock (notice.go).
	Notice
}

// Check returns the check with the given name.
func (r *Result) Check(name string) (Check, bool) { return r.Checks.Find(name) }

// decide sets the verdict from the checks: any failure is a violation;
// otherwise any unknown leaves the run undecided.
func (r *Result) decide() {
	r.Verdict = Safe
	var failed, unknown []string
	for _, c := range r.Checks {
		switch c.Status {
		case Fail:
			failed = append(failed, fmt.Sprintf("%s (%d)", c.Name, c.Count))
		case Unknown:
			unknown = append(unknown, c.Name)
		}
	}
	switch {
	case len(failed) > 0:
		r.Verdict = Violated
		r.Summary = "violated: " + strings.Join(failed, ", ")
	case len(unknown) > 0:
		r.Verdict = Undecided
		r.Summary = "unknown: " + strings.Join(unknown, ", ") + " could not decide"
	default:
		r.Summary = fmt.Sprintf("safe: %d operations on %d keys", r.Ops, r.Keys)
	}
	r.ExitCode = r.Verdict.ExitCode()
	r.Class = ClassOf(r.Verdict, r.Checks)
}

// findings accumulates one check's findings under the listing cap.
type findings struct {
	max     int
	list    []Finding
	count   int
	failing int
	allowed int
	windows map[int64]int
}

func (f *findings) add(x Finding) {
	f.count++
	if x.Allowed {
		f.allowed++
	} else {
		f.failing++
		for _, w := range x.Faults {
			f.inWindow(w.Start, 1)
		}
	}
	if len(f.list) < f.max {
		f.list = append(f.list, x)
	}
}

func (f *findings) inWindow(start int64, n int) {
	if f.windows == nil {
		f.windows = map[int64]int{}
	}
	f.windows[start] += n
}

func (f *findings) merge(g *findings) {
	f.count += g.count
	f.failing += g.failing
	f.allowed += g.allowed
	for w, n := range g.windows {
		f.inWindow(w, n)
	}
	for _, x := range g.list {
		if len(f.list) < f.max {
			f.list = append(f.list, x)
		}
	}
}

// check turns the findings into a Check with a status and a summary line.
func (f *findings) check(name, what string) Check {
	c := Check{Name: name, Count: f.count, Findings: f.list, Truncated: f.count > len(f.list), InWindows: f.windows}
	switch {
	case f.failing > 0:
		c.Status = Fail
		c.Summary = fmt.Sprintf("%d %s", f.count, what)
		if f.allowed > 0 {
			c.Summary += fmt.Sprintf(" (%d allowed)", f.allowed)
		}
	case f.allowed > 0:
		c.Status = Allowed
		c.Summary = fmt.Sprintf("%d %s, allowed", f.count, what)
	default:
		c.Status = Pass
		c.Summary = "no " + what
	}
	return c
}
