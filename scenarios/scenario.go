package scenarios

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/lockcheck/lockcheck/scenarios/fault"
)

// Scenario is every input that shapes one run, in five parts: the
// servers, the client, the faults, the traffic and the checker's one
// setting. A run's folder keeps it (scenario.json), so the folder alone
// replays the run; the CLI's flags, the matrix, the suites and bench all
// build one, and nothing else carries run settings.
//
// The parts are embedded, so a setting reads as s.TTL wherever it lives,
// and scenario.json stays one flat object. Each setting is one row of the
// table of settings (settings.go), which gives its flag, its default, its
// key in scenario.json and its place in the replay command line.
//
// The zero value of a field takes the default WithDefaults gives it. Where
// the default is not "none" (stalls, pauses inside lock calls, late holds,
// abandons, observations), a negative value says none; faults, AOF and
// WAIT are off unless set. Resolve applies the defaults and validates,
// once, where a Scenario enters a run.
type Scenario struct {
	ServerSettings
	ClientSettings
	FaultSettings
	TrafficSettings
	CheckSettings
}

// None is the value of a share or interval that says "none" where the
// default is not.
const None = -1

// The default workload's shares of holds that stall and that are frozen
// inside a lock call: a quiet scenario sets both to None.
const (
	DefaultStallRate = 0.6
	DefaultPauseRate = 0.7
)

// Quiet turns off what makes a correct unfenced client's writes stale
// (stalls, pauses inside lock calls): the scenario the safe expectation
// is meant for.
func (s Scenario) Quiet() Scenario {
	s.StallRate, s.PauseRate = None, None
	return s
}

// WithDefaults fills every zero field with its default, from the table
// of settings (Settings), in its order. lockcheck run's flags show these
// values, and a resolved Scenario (as in scenario.json) comes back
// unchanged.
func (s Scenario) WithDefaults() Scenario {
	for _, st := range Settings() {
		st.applyDefault(&s)
	}
	return s
}

// Defaults is the Scenario every setting left out gives: what lockcheck
// run's flags show (a zero Scenario resolved; it names no server, which
// is its only error).
func Defaults() Scenario {
	s, _ := Scenario{}.Resolve()
	return s
}

// Resolve is where a Scenario enters a run: it applies the defaults once
// and validates the result, which it returns also when it is invalid.
// It is the only caller of WithDefaults outside tests. The methods that
// read a setting's default (Validate, LockKeys, Schedule, Name, Summary, CoverageGoal,
// CoveredAfterFaults, Overtime) expect a resolved Scenario.
func (s Scenario) Resolve() (Scenario, error) {
	s = s.WithDefaults()
	return s, s.Validate()
}

// ServerConfig are the configuration lines every server gets from the
// scenario's own settings and from its faults that need one from the
// start (fault.Configured).
func (s Scenario) ServerConfig() []string {
	var lines []string
	if s.MinReplicas > 0 {
		lines = append(lines, fmt.Sprintf("min-replicas-to-write %d", s.MinReplicas))
		if s.MinReplicasMaxLag > 0 {
			lines = append(lines, fmt.Sprintf("min-replicas-max-lag %d", s.MinReplicasMaxLag/time.Second))
		}
	}
	if s.Reshard {
		// an emptied primary stays a primary, to take its slots back, and
		// its replica does not take over while it restarts (a valkey-9.1
		// replica did, seen here: the slots then had no primary of the
		// old one's to go back to); nothing with slots stops meanwhile
		lines = append(lines, "cluster-allow-replica-migration no", "cluster-replica-no-failover yes")
	}
	faults, _ := s.FaultList()
	for _, f := range faults {
		if c, ok := f.(fault.Configured); ok {
			for _, l := range c.ServerConfig() {
				if !slices.Contains(lines, l) {
					lines = append(lines, l)
				}
			}
		}
	}
	return lines
}

// FaultList looks up the scenario's faults by name.
func (s Scenario) FaultList() ([]fault.Fault, error) {
	if s.UpgradeTo != "" {
		return []fault.Fault{fault.RollingUpgrade}, nil
	}
	var out []fault.Fault
	for _, name := range s.Faults {
		f, err := fault.Lookup(name)
		if err != nil {
			return nil, err
		}
		out = append(out, f)
	}
	return out, nil
}

// LockKeys are the keys the workers contend for (a resolved Scenario's).
func (s Scenario) LockKeys() []string {
	keys := make([]string, s.Keys)
	for i := range keys {
		keys[i] = LockKey(i)
	}
	return keys
}

// Schedule is the fault schedule the seed gives a resolved Scenario (see
// fault.Schedule).
func (s Scenario) Schedule() ([]fault.Event, error) {
	faults, err := s.FaultList()
	if err != nil {
		return nil, err
	}
	if s.UpgradeTo != "" {
		// one upgrade from the start, so that its first window (every
		// node on the old build) holds the run's first operations too
		return []fault.Event{{At: 0, Fault: fault.RollingUpgrade.Name(), Key: s.LockKeys()[0]}}, nil
	}
	if s.Events != nil {
		return slices.Clone(s.Events), nil
	}
	return fault.Schedule(s.Seed, faults, s.LockKeys(), s.Duration, s.TTL), nil
}

// Builds lists every build the scenario's nodes run, Server first.
func (s Scenario) Builds() []string {
	out := []string{s.Server}
	if s.UpgradeTo != "" {
		out = append(out, s.UpgradeTo)
	}
	for _, node := range slices.Sorted(maps.Keys(s.NodeBuilds)) {
		if b := s.NodeBuilds[node]; !slices.Contains(out, b) {
			out = append(out, b)
		}
	}
	return out
}

// Name is a resolved scenario in a few words: build, topology, client,
// faults.
func (s Scenario) Name() string {
	faults := "no faults"
	if len(s.Faults) > 0 {
		faults = strings.Join(s.Faults, "+")
	}
	if s.UpgradeTo != "" {
		faults = "upgrade to " + s.UpgradeTo
	}
	return fmt.Sprintf("%s %s %s %s", s.Server, s.Topology, s.Client, faults)
}

// Outline is Summary for a scenario that is not whole yet, defaults
// filled in: a measurement's gate or a mutant case, whose server and
// topology the measurement gives each run (which resolves it then).
func (s Scenario) Outline() string {
	s, _ = s.Resolve()
	return s.Summary()
}

// Summary describes a resolved scenario's workload in one line: what a
// reader needs to see what the run did.
func (s Scenario) Summary() string {
	share := func(rate float64, what, none string) string {
		if rate > 0 {
			return fmt.Sprintf("%s %g", what, rate)
		}
		return none
	}
	parts := []string{fmt.Sprintf("%d clients on %d key(s), TTL %s, %s per run, work %s-%s, %s, %s, %s, %s, %s, %s, backoff %s-%s",
		s.Clients, s.Keys, s.TTL, s.Duration, s.WorkMin, s.WorkMax,
		share(s.StallRate, fmt.Sprintf("stall rate (%s-%s)", s.TTL*6/5, s.TTL*2), "no stalls"),
		share(s.PauseRate, fmt.Sprintf("pause rate (%s-%s inside a lock call)", s.TTL*6/5, s.TTL*2), "no pauses inside a lock call"),
		share(s.LateRate, "late hold rate", "no late holds"),
		share(s.LateReplyRate, fmt.Sprintf("late reply rate (%s, past the call timeout)", LateReplyFor(s)), "no late replies"),
		share(s.QuietStallRate, "quiet stall rate (of those just past the lease)", "no quiet stalls"),
		share(s.AbandonRate, "abandon rate", "no abandons"), s.BackoffMin, s.BackoffMax)}
	if s.ObserveEvery <= 0 {
		parts = append(parts, "no observations")
	}
	if s.FenceGap > 0 {
		gap := "fence gap " + s.FenceGap.String()
		if s.FenceGapRandom {
			gap += " on half the acquires"
		}
		parts = append(parts, gap)
	}
	if s.Wait.Enabled() {
		parts = append(parts, fmt.Sprintf("%s after every acquire, %s when short", s.Wait, s.Wait.OnShort))
	}
	for _, f := range s.Faults {
		parts = append(parts, "fault "+f)
	}
	if s.UpgradeTo != "" {
		parts = append(parts, "rolling upgrade to "+s.UpgradeTo)
	}
	return strings.Join(parts, ", ")
}
