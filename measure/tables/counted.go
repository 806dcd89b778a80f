package tables

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/lockcheck/lockcheck/checker"
	"github.com/lockcheck/lockcheck/harness"
	"github.com/lockcheck/lockcheck/history"
	"github.com/lockcheck/lockcheck/history/historyjson"
	"github.com/lockcheck/lockcheck/scenarios"
	"github.com/lockcheck/lockcheck/topology"
)

// counted is one of a measurement's runs, made by harness's run path in a
// scratch folder under the measurement's: the figures are taken from it,
// a history worth a look is kept, and the folder is dropped.
type counted struct {
	outcome *harness.Outcome
	dir     string
	// kept is set once the folder was kept whole: drop leaves it.
	kept bool
}

// runCounted makes one counted run in a new scratch folder under out:
// exec is harness.Execute or harness.ExecuteOn with the options given.
// The adapters' stderr goes to stderrDir (the scratch folder when "").
// The check runs after Ctrl-C too: the run finished, and its history
// counts.
func runCounted(out, stderrDir string, exec func(harness.Options) (*harness.Outcome, error)) (*counted, error) {
	if err := os.MkdirAll(out, 0o755); err != nil {
		return nil, fmt.Errorf("measurement folder: %w", err)
	}
	dir, err := os.MkdirTemp(out, ".run-")
	if err != nil {
		return nil, fmt.Errorf("scratch folder of a run: %w", err)
	}
	o, err := exec(harness.Options{Out: dir, Counted: true, StderrDir: stderrDir})
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	return &counted{outcome: o, dir: dir}, nil
}

// onTopology is exec for a run of s on t, a topology the measurement
// started and reuses.
func onTopology(ctx context.Context, t *topology.Topology, s scenarios.Scenario) func(harness.Options) (*harness.Outcome, error) {
	return func(o harness.Options) (*harness.Outcome, error) { return harness.ExecuteOn(ctx, t, s, o) }
}

// result is the run's check.
func (c *counted) result() *checker.Result { return c.outcome.Check }

// ops is how many operations the run made.
func (c *counted) ops() int { return c.outcome.Check.Ops }

// history is the run's whole history: the outcome holds only the head of
// a long one, whose operations are read back from its file.
func (c *counted) history() (*history.History, error) {
	if h := c.outcome.History; len(h.Ops) == c.outcome.Check.Ops {
		return h, nil
	}
	return historyjson.Load(filepath.Join(c.dir, "history.json"))
}

// keep moves the run's history to OUT/histories/NAME for a run worth a
// look, and returns the path the measurement's table names ("" when it
// could not be kept: the figure loses nothing, and logf says why).
func (c *counted) keep(out, name string, logf func(string, ...any)) string {
	rel := filepath.Join("histories", name)
	path := filepath.Join(out, rel)
	err := os.MkdirAll(filepath.Dir(path), 0o755)
	if err == nil {
		err = os.Rename(filepath.Join(c.dir, "history.json"), path)
	}
	if err != nil {
		logf("keep the history %s: %v", path, err)
		return ""
	}
	return rel
}

// keepFolder moves the whole scratch folder (the run's log, operations
// and scenario) to OUT/rel, for a run whose folder is the evidence of
// something that went wrong beside its verdict.
func (c *counted) keepFolder(out, rel string, logf func(string, ...any)) {
	path := filepath.Join(out, rel)
	err := os.MkdirAll(filepath.Dir(path), 0o755)
	if err == nil {
		err = os.Rename(c.dir, path)
	}
	if err != nil {
		logf("keep the run's folder %s: %v", path, err)
		return
	}
	c.dir, c.kept = path, true
	logf("kept the run's folder in %s", path)
}

// drop removes the scratch folder, unless it was kept.
func (c *counted) drop() {
	if !c.kept {
		os.RemoveAll(c.dir)
	}
}

// Failing lists the checks of a result that failed and those that could
// not decide, in the result's order.
func Failing(res *checker.Result) (failing, unknown []string) {
	for _, ch := range res.Checks {
		switch ch.Status {
		case checker.Fail:
			failing = append(failing, ch.Name)
		case checker.Unknown:
			unknown = append(unknown, ch.Name)
		}
	}
	return failing, unknown
}

// flushPrimary empties the topology's primary before a run, so that no
// key of the last run is read by the next.
func flushPrimary(ctx context.Context, t *topology.Topology) error {
	fctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	p, err := t.Primary(fctx, scenarios.LockKey(0))
	if err != nil {
		return fmt.Errorf("flushall: %w", err)
	}
	if _, err := p.Do(fctx, "FLUSHALL"); err != nil {
		return fmt.Errorf("flushall: %w", err)
	}
	return nil
}

// GateScenario is the default gate as the catch-rate and false-alarm
// tables measure it: the default workload (stalls, late holds and pauses
// inside lock calls on) with only its lease, workers, keys and length
// given, as a library's CI would give them.
var GateScenario = scenarios.Scenario{TrafficSettings: scenarios.TrafficSettings{TTL: 500 * time.Millisecond, Clients: 6, Keys: 1, Duration: 30 * time.Second}}
