package reports

import (
	"fmt"

	"github.com/lockcheck/lockcheck/checker"
	"github.com/lockcheck/lockcheck/history"
)

// RunResult is result.json: what a run was and what the checks found.
type RunResult struct {
	Verdict checker.Verdict `json:"verdict"`
	// Class is the checker's class of the run (checker.ClassOf).
	Class    checker.Class `json:"class"`
	ExitCode int           `json:"exit_code"`
	Seed     int64         `json:"seed"`
	Server   string        `json:"server"`
	Version  string        `json:"version"`
	Topology string        `json:"topology"`
	Client   string        `json:"client"`
	Faults   []string      `json:"faults"`
	Ops      int           `json:"ops"`
	// Injected lists the fault windows as they happened.
	Injected   []history.Fault `json:"injected"`
	DurationMs int64           `json:"duration_ms"`
	TTLms      int64           `json:"ttl_ms"`
	Clients    int             `json:"clients"`
	Keys       int             `json:"keys"`
	Checks     checker.Checks  `json:"checks"`
	// NotReproduced says why the run's faults did not get to show
	// anything (a fault that could not make its moment, an aftermath cut
	// short): the verdict is then unknown, not safe.
	NotReproduced []string `json:"not_reproduced,omitempty"`
	// Coverage is what the workload exercised (holds, contended
	// acquires, extends, stalls, pauses, fault steps), and whether the
	// run ended early for having covered its goal.
	Coverage *history.Coverage `json:"coverage,omitempty"`
	// Notes are things the run wants a reader to know (a fault that could
	// not be injected, a client's remark).
	Notes []string `json:"notes,omitempty"`
	// Replay is the command that runs the run's scenario again.
	Replay string `json:"replay,omitempty"`
	// Steps is a rolling upgrade's step table.
	Steps []Step `json:"steps,omitempty"`
	// TimeToNotice is how long holders went on after losing a lock
	// (checker.NoticeSummary); absent from results older than it.
	TimeToNotice *checker.NoticeSummary `json:"time_to_notice,omitempty"`
}

// NewRunResult joins a history's metadata and the checker's result.
func NewRunResult(h *history.History, res *checker.Result, notes []string) RunResult {
	faults := h.Meta.Faults
	if faults == nil {
		faults = []string{}
	}
	injected := h.Faults
	if injected == nil {
		injected = []history.Fault{}
	}
	return RunResult{
		Verdict: res.Verdict, Class: res.Class, ExitCode: res.Verdict.ExitCode(),
		Seed: h.Meta.Seed, Server: h.Meta.Server, Version: h.Meta.Version, Topology: h.Meta.Topology, Client: h.Meta.Client,
		Faults: faults, Ops: res.Ops, Injected: injected, DurationMs: h.Meta.DurationNs / 1e6,
		TTLms: h.Meta.TTLms, Clients: h.Meta.Clients, Keys: h.Meta.Keys, Coverage: h.Meta.Coverage, Checks: res.Checks, NotReproduced: res.NotReproduced, Notes: notes, Steps: Steps(h, res.Checks),
		TimeToNotice: res.TimeToNotice,
	}
}

// Save writes result.json.
func (r RunResult) Save(path string) error {
	return WriteJSON(path, r)
}

// LoadRunResult reads a result.json.
func LoadRunResult(path string) (RunResult, error) {
	var r RunResult
	return r, ReadJSON(path, &r)
}

// Suite renders a run's checks as a JUnit suite named after the run.
func (r RunResult) Suite(name string) JUnitSuite {
	s := JUnitSuite{Name: name, Time: float64(r.DurationMs) / 1000}
	for _, c := range r.Checks {
		jc := JUnitCase{Name: c.Name, ClassName: name, SystemOut: fmt.Sprintf("%s: %d found: %s", c.Status, c.Count, c.Summary)}
		switch c.Status {
		case checker.Fail:
			jc.Failure = &JUnitMessage{Message: c.Summary, Body: findingsText(c)}
		case checker.Unknown:
			jc.Error = &JUnitMessage{Message: "undecided: " + c.Summary}
		case checker.Skipped:
			jc.Skipped = &JUnitMessage{Message: c.Summary}
		}
		s.Cases = append(s.Cases, jc)
	}
	return s
}

func findingsText(c checker.Check) string {
	var out string
	for _, f := range c.Findings {
		out += f.Summary + "\n"
		if f.Explanation != "" {
			out += "  " + f.Explanation + "\n"
		}
	}
	return out
}
