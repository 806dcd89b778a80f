package main

import (
	"flag"
	"io"
	"reflect"
	"testing"
	"time"

	"github.com/lockcheck/lockcheck/scenarios"
	"github.com/lockcheck/lockcheck/scenarios/fault"
)

// TestScenarioArgs parses the flags a scenario renders (Scenario.Args,
// the commands the claims table shows) with lockcheck run's own parser:
// the command must make the same scenario, or the table would show a
// command that runs something else.
func TestScenarioArgs(t *testing.T) {
	cases := []scenarios.Scenario{scenarios.RedlockMutantScenario()}
	for _, c := range append(scenarios.RedlockClaims(), scenarios.MitigationClaims()...) {
		cases = append(cases, c.Scenario)
	}
	// a shrunk scenario: its fault steps fixed, not drawn
	shrunk := scenarios.MitigationClaims()[0].Scenario
	shrunk.Events = []fault.Event{{At: 2500 * time.Millisecond, Fault: shrunk.Faults[0], Key: scenarios.LockKey(0)}}
	shrunk.UntilCovered = true
	cases = append(cases, shrunk)
	for i, s := range cases {
		s.Server, s.Client, s.Seed = "valkey-9.1", "redlock", int64(i+1)
		if s.Topology != "redlock" {
			s.Client = "native"
		}
		fs := flag.NewFlagSet("run", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		var f scenarioFlags
		f.register(fs)
		if err := fs.Parse(s.Args()); err != nil {
			t.Fatalf("%s: %v", s.Command(), err)
		}
		got, err := f.scenario()
		if err != nil {
			t.Fatalf("%s: %v", s.Command(), err)
		}
		if want := s.WithDefaults(); !reflect.DeepEqual(got, want) {
			t.Errorf("%s\n made %+v\n want %+v", s.Command(), got, want)
		}
	}
}
