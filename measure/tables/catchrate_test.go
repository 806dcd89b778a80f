package tables

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/lockcheck/lockcheck/checker"
	"github.com/lockcheck/lockcheck/reports"
	"github.com/lockcheck/lockcheck/scenarios"
	"github.com/lockcheck/lockcheck/scenarios/lockclient"
)

// TestMutantCasesAreWellFormed checks the table catch-rate runs: every
// mutant and control is a known client, every named check is one the
// checker reports, and no mutant appears twice.
func TestMutantCasesAreWellFormed(t *testing.T) {
	seen := map[string]bool{}
	for _, c := range scenarios.MutantCases() {
		if !lockclient.Known(c.Client) || !lockclient.Known(c.Control) {
			t.Errorf("%s: unknown client or control %q", c.Client, c.Control)
		}
		if !strings.HasPrefix(c.Client, "mutant-") || strings.HasPrefix(c.Control, "mutant-") {
			t.Errorf("%s / %s: the case's client must be a mutant and its control a correct client", c.Client, c.Control)
		}
		if !slices.Contains(checker.CheckNames, c.Breaks) {
			t.Errorf("%s breaks %q, which the checker does not report (one of %v)", c.Client, c.Breaks, checker.CheckNames)
		}
		if seen[c.Client] {
			t.Errorf("%s appears twice", c.Client)
		}
		seen[c.Client] = true
		s := c.Scenario
		if c.Why == "" || s.Clients <= 0 || s.Keys <= 0 || s.TTL <= 0 || s.Duration <= 0 {
			t.Errorf("%s: why, clients, keys, TTL and duration must be set: %+v", c.Client, c)
		}
		w := c.Run(c.Control, 7, 0)
		if w.Client != c.Control || w.Seed != 7 || w.Duration != s.Duration {
			t.Errorf("%s: the control's run is %s seed %d for %s, want %s seed 7 for %s", c.Client, w.Client, w.Seed, w.Duration, c.Control, s.Duration)
		}
		if got := c.Run(c.Client, 1, 3e9).Duration; got != 3e9 {
			t.Errorf("%s: a duration override gave %s", c.Client, got)
		}
	}
	for _, m := range []string{"mutant-del", "mutant-extend-nopx", "mutant-extend-keepttl", "mutant-reacquire", "mutant-fence-outside"} {
		if _, err := scenarios.LookupMutantCase(m); err != nil {
			t.Errorf("no randomized scenario for %s: %v", m, err)
		}
	}
	if _, err := scenarios.LookupMutantCase("native"); err == nil {
		t.Error("native has a mutant case")
	}
}

func TestFailingListsFailedAndUndecidedChecks(t *testing.T) {
	res := &checker.Result{Checks: checker.Checks{
		{Name: checker.DoubleHolder, Status: checker.Allowed},
		{Name: checker.Fence, Status: checker.Pass},
		{Name: checker.Resource, Status: checker.Fail},
		{Name: checker.Linearizability, Status: checker.Unknown},
		{Name: checker.TTL, Status: checker.Fail},
	}}
	failing, unknown := Failing(res)
	if !slices.Equal(failing, []string{checker.Resource, checker.TTL}) || !slices.Equal(unknown, []string{checker.Linearizability}) {
		t.Fatalf("failing %v, unknown %v", failing, unknown)
	}
}

// TestTallyCountsCatchesAndFalseAlarmsOfTheNamedCheckOnly: other failing
// checks are counted beside (a control's resource failures under stalls
// are expected), never as a catch or an alarm; an undecided check and a
// run that did not run are not catches.
func TestTallyCountsCatchesAndFalseAlarmsOfTheNamedCheckOnly(t *testing.T) {
	mc := scenarios.MutantCase{Client: "mutant-del", Breaks: checker.Linearizability, Control: "native", Why: "w",
		Scenario: scenarios.Scenario{TrafficSettings: scenarios.TrafficSettings{Clients: 4, Keys: 1, TTL: 1e9, Duration: 12e9}}}
	mut := func(seed int64, failing ...string) reports.CatchRun {
		return reports.CatchRun{Client: mc.Client, Seed: seed, Failing: failing}
	}
	ctl := func(seed int64, failing ...string) reports.CatchRun {
		return reports.CatchRun{Client: mc.Control, Control: true, Seed: seed, Failing: failing}
	}
	undecided := mut(4)
	undecided.Unknown = []string{checker.Linearizability}
	broken := mut(5)
	broken.Error = "flushall: EOF"
	runs := []reports.CatchRun{
		mut(1, checker.Linearizability, checker.Resource), ctl(1, checker.Resource),
		mut(2, checker.Linearizability), ctl(2),
		mut(3, checker.Resource), ctl(3, checker.Linearizability, checker.Resource),
		undecided, ctl(4, checker.Resource),
		broken,
	}
	row := Tally(mc, runs)
	want := reports.CatchRow{MutantRuns: 4, ControlRuns: 4, Errors: 1, Caught: 2, Undecided: 1, FalseAlarms: 1}
	got := reports.CatchRow{MutantRuns: row.MutantRuns, ControlRuns: row.ControlRuns, Errors: row.Errors, Caught: row.Caught,
		Undecided: row.Undecided, FalseAlarms: row.FalseAlarms}
	if got.MutantRuns != want.MutantRuns || got.ControlRuns != want.ControlRuns || got.Errors != want.Errors ||
		got.Caught != want.Caught || got.Undecided != want.Undecided || got.FalseAlarms != want.FalseAlarms {
		t.Errorf("tally %+v, want %+v", got, want)
	}
	if row.CaughtBy[checker.Linearizability] != 2 || row.CaughtBy[checker.Resource] != 2 || len(row.CaughtBy) != 2 {
		t.Errorf("caught by %v, want linearizability 2, resource 2", row.CaughtBy)
	}
	if row.ControlFailing[checker.Resource] != 3 || len(row.ControlFailing) != 1 {
		t.Errorf("control's other failing checks %v, want resource 3 (linearizability is the false alarm, counted apart)", row.ControlFailing)
	}
	if row.GoalMet() {
		t.Error("a row with 2 catches of 4, a false alarm and an error meets the goal")
	}
	if row.Scenario == "" || !strings.Contains(row.Scenario, "4 clients on 1 key") {
		t.Errorf("scenario %q does not describe the workload", row.Scenario)
	}
}

// TestGoalIsNineteenOfTwenty: 19 catches of 20 and no false alarm meet the
// goal; 18 do not, nor does one false alarm.
func TestGoalIsNineteenOfTwenty(t *testing.T) {
	mc := scenarios.MutantCase{Client: "mutant-extend-nopx", Breaks: checker.TTL, Control: "native"}
	runs := func(caught, alarms int) []reports.CatchRun {
		var out []reports.CatchRun
		for i := range 20 {
			m := reports.CatchRun{Client: mc.Client, Seed: int64(i + 1)}
			if i < caught {
				m.Failing = []string{checker.TTL}
			}
			c := reports.CatchRun{Client: mc.Control, Control: true, Seed: int64(i + 1), Failing: []string{checker.Resource}}
			if i < alarms {
				c.Failing = append(c.Failing, checker.TTL)
			}
			out = append(out, m, c)
		}
		return out
	}
	for _, c := range []struct {
		caught, alarms int
		met            bool
	}{{20, 0, true}, {19, 0, true}, {18, 0, false}, {20, 1, false}} {
		if got := Tally(mc, runs(c.caught, c.alarms)).GoalMet(); got != c.met {
			t.Errorf("caught %d of 20, %d false alarms: goal met %v, want %v", c.caught, c.alarms, got, c.met)
		}
	}
}

// TestCatchRateFiles writes both files and checks the table shows the
// figures and the other failing checks.
func TestCatchRateFiles(t *testing.T) {
	mc := scenarios.MutantCase{Client: "mutant-extend-keepttl", Breaks: checker.DoubleHolder, Control: "native", Why: "keepttl"}
	row := Tally(mc, []reports.CatchRun{
		{Client: mc.Client, Seed: 1, Failing: []string{checker.DoubleHolder, checker.Resource}},
		{Client: mc.Control, Control: true, Seed: 1, Failing: []string{checker.Resource}},
	})
	dir := t.TempDir()
	cr := &reports.CatchRate{Server: "valkey-9.1", Version: "9.1.2", Topology: "standalone", Runs: 1, Complete: true, Rows: []reports.CatchRow{row}}
	if err := reports.WriteCatchRate(dir, cr); err != nil {
		t.Fatal(err)
	}
	md, err := os.ReadFile(filepath.Join(dir, "catch-rate.md"))
	if err != nil {
		t.Fatal(err)
	}
	line := "| mutant-extend-keepttl | double_holder | 1 of 1 | double_holder: 1, resource: 1 | native | 0 of 1 | resource: 1 | met |"
	if !strings.Contains(string(md), line) {
		t.Errorf("catch-rate.md lacks the row %q:\n%s", line, md)
	}
	if _, err := os.Stat(filepath.Join(dir, "catch-rate.json")); err != nil {
		t.Error(err)
	}
}
