package main

import (
	"flag"
	"io"
	"reflect"
	"testing"

	"github.com/lockcheck/lockcheck/scenarios"
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
