package main

import (
	"flag"
	"fmt"
	"reflect"
	"slices"
	"time"

	"github.com/lockcheck/lockcheck/scenarios"
	"github.com/lockcheck/lockcheck/topology"
)

// scenarioFlags parse the flags of a command that runs a scenario
// (lockcheck run, upgrade) into a Scenario. Its flags are the rows of the
// table of settings (scenarios.Settings), registered by walking it: a
// setting that is one value is bound to its Scenario field, the others are
// kept as text for their row's Parse. Each flag's default is the one the
// command applies (run's are scenarios.Defaults()).
type scenarioFlags struct {
	s scenarios.Scenario
	// text holds the flags that a row's Parse reads, by name.
	text map[string]func() []string
	// optional holds the flags printed without a default (--nodes).
	optional map[string]*optional[int]
	sourceFlags
	fs *flag.FlagSet
}

// notInUpgrade are run's flags that lockcheck upgrade could only refuse:
// its builds are --from and --to, a rolling upgrade is the run's one fault
// and starts every node on one build, and independent primaries have no
// upgrade step.
var notInUpgrade = []string{"server", "node-build", "fault", "fault-at", "nodes"}

// onlyInUpgrade are the settings that shape a rolling upgrade's steps:
// lockcheck run, which has none, does not offer them.
var onlyInUpgrade = []string{"reshard"}

// register adds lockcheck run's flags.
func (f *scenarioFlags) register(fs *flag.FlagSet) {
	f.registerWith(fs, scenarios.Defaults(), false)
}

// upgradeDefaults are lockcheck upgrade's defaults where they differ from
// run's: Sentinel, a topology whose upgrade has a failover step; short
// leases, so that every step's state sees many holds; a duration that is
// a bound, as the run ends with the upgrade's last step.
func upgradeDefaults() scenarios.Scenario {
	d := scenarios.Scenario{
		ServerSettings:  scenarios.ServerSettings{Topology: topology.Sentinel},
		TrafficSettings: scenarios.TrafficSettings{TTL: 2 * time.Second, Duration: 10 * time.Minute},
	}
	d, _ = d.Resolve() // no server yet: the flags name it
	return d
}

// registerUpgrade adds lockcheck upgrade's flags: run's, with --from and
// --to for --server, upgrade's defaults, and none that it could only
// refuse (notInUpgrade).
func (f *scenarioFlags) registerUpgrade(fs *flag.FlagSet) {
	f.registerWith(fs, upgradeDefaults(), true)
}

// registerWith adds the scenario flags with d's defaults; an upgrade's
// server flags are --from and --to, and it has only the topologies an
// upgrade has steps in.
func (f *scenarioFlags) registerWith(fs *flag.FlagSet, d scenarios.Scenario, upgrade bool) {
	f.fs, f.text, f.optional = fs, map[string]func() []string{}, map[string]*optional[int]{}
	if upgrade {
		fs.StringVar(&f.s.Server, "from", "", "the build every node starts on, e.g. valkey-8.1")
		fs.StringVar(&f.s.UpgradeTo, "to", "", "the build every node is moved onto, one at a time, e.g. valkey-9.1 (an older build: a rollback)")
	}
	for _, st := range scenarios.Settings() {
		if st.Flag == "" || upgrade && slices.Contains(notInUpgrade, st.Flag) || !upgrade && slices.Contains(onlyInUpgrade, st.Flag) {
			continue
		}
		if upgrade && st.Flag == "topology" {
			st.Help = "replicated, sentinel or cluster (a standalone server or independent primaries have no upgrade step)"
		}
		f.registerSetting(fs, st, d)
	}
	f.sourceFlags.register(fs)
}

// registerSetting adds one row's flag: bound to its field with d's value
// as its default where the row has a default, else with none.
func (f *scenarioFlags) registerSetting(fs *flag.FlagSet, st scenarios.Setting, d scenarios.Scenario) {
	switch {
	case st.Optional:
		f.optional[st.Flag] = optionalInt(fs, st.Flag, st.Help)
	case st.Bound():
		def := reflect.ValueOf(st.Ptr(&d)).Elem()
		if st.Default == nil {
			def = reflect.Zero(def.Type())
		}
		bind(fs, st, st.Ptr(&f.s), def)
	case st.Repeat:
		var m multiFlag
		fs.Var(&m, st.Flag, st.Help)
		f.text[st.Flag] = func() []string { return m }
	default:
		def := ""
		if st.Default != nil {
			def = fmt.Sprint(st.Default)
		}
		v := fs.String(st.Flag, def, st.Help)
		f.text[st.Flag] = func() []string { return []string{*v} }
	}
}

// bind registers a flag on the field p points at, by the field's type.
func bind(fs *flag.FlagSet, st scenarios.Setting, p any, def reflect.Value) {
	switch q := p.(type) {
	case *bool:
		fs.BoolVar(q, st.Flag, def.Bool(), st.Help)
	case *int:
		fs.IntVar(q, st.Flag, int(def.Int()), st.Help)
	case *int64:
		fs.Int64Var(q, st.Flag, def.Int(), st.Help)
	case *time.Duration:
		fs.DurationVar(q, st.Flag, time.Duration(def.Int()), st.Help)
	case *float64:
		fs.Float64Var(q, st.Flag, def.Float(), st.Help)
	default: // text: a string, or a type of one (topology.Kind)
		s := reflect.ValueOf(p).Convert(reflect.TypeFor[*string]()).Interface().(*string)
		fs.StringVar(s, st.Flag, def.String(), st.Help)
	}
}

// scenario checks the flags and returns the resolved Scenario, with a
// seed picked when none was given.
func (f *scenarioFlags) scenario() (scenarios.Scenario, error) {
	s := f.s
	var positives []string
	for _, st := range scenarios.Settings() {
		if o := f.optional[st.Flag]; o != nil {
			*st.Ptr(&s).(*int) = o.or(0)
		}
		if st.Positive {
			positives = append(positives, st.Flag)
		}
	}
	if err := positive(f.fs, positives...); err != nil {
		return s, err
	}
	text := func(name string) []string {
		if t := f.text[name]; t != nil {
			return t()
		}
		return nil
	}
	for _, st := range scenarios.Settings() {
		if st.Flag == "" || f.fs.Lookup(st.Flag) == nil {
			continue
		}
		if err := st.Flagged(&s); err != nil {
			return s, err
		}
	}
	for _, st := range scenarios.Settings() {
		if st.Parse == nil || f.fs.Lookup(st.Flag) == nil {
			continue
		}
		if err := st.Parse(&s, text); err != nil {
			return s, err
		}
	}
	if s.Seed == 0 {
		s.Seed = time.Now().UnixNano()%1_000_000_000 + 1
	}
	return s.Resolve()
}
