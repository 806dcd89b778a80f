package locktest

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lockcheck/lockcheck/checker"
	"github.com/lockcheck/lockcheck/harness"
	"github.com/lockcheck/lockcheck/history"
	"github.com/lockcheck/lockcheck/scenarios"
	"github.com/lockcheck/lockcheck/scenarios/lockclient"
)

// The types a library's adapter is written against, named here so that
// its test imports one package.
type (
	// Scenario is everything that shapes a run (lockcheck run's flags);
	// its Client is set by Run.
	Scenario = scenarios.Scenario
	// ServerSettings, ClientSettings, FaultSettings, TrafficSettings and
	// CheckSettings are a Scenario's parts, as a literal names them.
	ServerSettings  = scenarios.ServerSettings
	ClientSettings  = scenarios.ClientSettings
	FaultSettings   = scenarios.FaultSettings
	TrafficSettings = scenarios.TrafficSettings
	CheckSettings   = scenarios.CheckSettings
	// Config is what a client connects with.
	Config = lockclient.Config
	// Client is the library under test, one logical client.
	Client = lockclient.Client
	// Result is what one lock call reported.
	Result = lockclient.Result
	// Capability is a server feature a client's commands need.
	Capability = lockclient.Capability
	// Class is a run's verdict at a glance: safe, fenced, violated, unknown.
	Class = checker.Class
)

// What a call reports (Result.Outcome).
const (
	OK      = history.OK
	Fail    = history.Fail
	Unknown = history.Unknown
)

// NewClient builds the library's client number cfg.ID.
type NewClient func(cfg Config) (Client, error)

// Report is what a run left: its folder (report.html, history.json,
// result.json, scenario.json, the nodes' logs) and its verdict.
type Report struct {
	Dir     string
	Class   Class
	Summary string
	// Ops is how many operations the history holds.
	Ops int
	// Coverage is what the run exercised; with Scenario.UntilCovered it
	// ended once that met its goal.
	Coverage history.Coverage
	// TimeToNotice is how long the library's holders went on after
	// losing a lock before a reply told them (checker.NoticeSummary): how
	// soon a library says so is part of what it promises its caller.
	TimeToNotice checker.NoticeSummary
}

// Option adjusts how a run is judged or kept.
type Option func(*options)

type options struct {
	expect checker.Expectation
	needs  []Capability
	opaque bool
	out    string
}

// Expectations: a run passes or fails by the one given (ExpectLockCorrect
// when none is).
var (
	// ExpectLockCorrect, the default: no two workers believe they hold at
	// once, every reply is one the server could have given, no key is left
	// without expiry or stuck, no lock command is refused; an unfenced
	// holder's write after a stall past its lease is allowed (only a fence
	// stops it). What a correct lock passes under the default workload's
	// stalls and pauses inside lock calls.
	ExpectLockCorrect Option = expect(checker.ExpectLockCorrect)
	// ExpectSafe: every check passes and no two workers ever held the
	// lock at once: for a quiet scenario (Scenario.Quiet), or a fenced
	// library.
	ExpectSafe Option = expect(checker.ExpectSafe)
	// ExpectFenceHolds: two holders are allowed, the fence must stop the
	// stale one, and every other check passes. Needs Scenario.Fenced.
	ExpectFenceHolds Option = expect(checker.ExpectFenceHolds)
	// Opaque says the library's key or the value in it are its own (a
	// prefix, a JSON value): the observer then does not read the key.
	Opaque Option = func(o *options) { o.opaque = true }
)

func expect(e checker.Expectation) Option { return func(o *options) { o.expect = e } }

// Needs names the server capabilities the library's commands use: a run
// on a server without one is refused before it starts, in one line.
func Needs(caps ...Capability) Option {
	return func(o *options) { o.needs = append(o.needs, caps...) }
}

// Out puts run folders under dir (default LOCKTEST_OUT, else
// os.TempDir()/locktest).
func Out(dir string) Option { return func(o *options) { o.out = dir } }

// Run starts s's topology, runs s with the library's client, checks the
// history and fails t unless the run meets the expectation. It skips t
// where Docker or the build's image is missing (fails it with
// LOCKTEST_REQUIRE set). Each Run starts its own topology; New shares
// them across subtests.
func Run(t testing.TB, s Scenario, newClient NewClient, opts ...Option) Report {
	t.Helper()
	return New(t).Run(t, s, newClient, opts...)
}

// kinds numbers the client kinds Run registers.
var kinds atomic.Int64

// Run is the package's Run on e's topologies: a topology of the same
// build, kind and node settings started for an earlier run is reset and
// reused.
func (e *Env) Run(t testing.TB, s Scenario, newClient NewClient, opts ...Option) Report {
	t.Helper()
	o := options{expect: checker.DefaultExpectation}
	for _, opt := range opts {
		opt(&o)
	}
	kind := fmt.Sprintf("locktest-%d", kinds.Add(1))
	unregister, err := lockclient.Register(kind, lockclient.Traits{Needs: o.needs, Fenced: s.Fenced, Library: true, Opaque: o.opaque},
		func(cfg Config) (Client, error) { return newClient(cfg) })
	if err != nil {
		t.Fatalf("locktest: %v", err)
	}
	defer unregister()
	s.Client = kind
	s, err = s.Resolve()
	if err != nil {
		t.Fatalf("locktest: scenario: %v", err)
	}
	if s.UpgradeTo != "" {
		// an upgrade changes the topology it runs on, which locktest shares
		t.Fatalf("locktest: scenario: a rolling upgrade (UpgradeTo) runs through lockcheck upgrade, not locktest")
	}
	if o.expect == checker.ExpectFenceHolds && !s.Fenced {
		t.Fatalf("locktest: ExpectFenceHolds needs a client that draws fences: set Scenario.Fenced and return a fence with every OK acquire")
	}
	topo, release := e.topology(t, s)
	defer release()

	name := strings.Replace(s.Name(), " "+kind, "", 1)
	dir := filepath.Join(outRoot(o.out), fmt.Sprintf("%s-%s", scenarios.SafeName(t.Name()), time.Now().Format("20060102-150405.000")))
	t.Logf("locktest: %s for %v, seed %d, run folder %s", name, s.Duration, s.Seed, dir)
	out, err := harness.ExecuteOn(t.Context(), topo, s, harness.Options{Out: dir, Log: logWriter{t}, Replay: replayCommand(t, name, s.Seed)})
	if err != nil {
		t.Fatalf("locktest: %s: %v (run folder %s)", name, err, dir)
	}
	r := Report{Dir: dir, Class: out.Check.Class, Summary: out.Check.Summary, Ops: out.Check.Ops}
	if c := out.History.Meta.Coverage; c != nil {
		r.Coverage = *c
	}
	if n := out.Check.TimeToNotice; n != nil {
		r.TimeToNotice = *n
	}
	if out.Interrupted {
		t.Fatalf("locktest: %s: interrupted after %d operations, no verdict (run folder %s)", name, r.Ops, dir)
	}
	if err := o.expect.Meets(out.Check, out.History.Meta.Fenced); err != nil {
		t.Errorf("locktest: %s: %v\n\treport: %s", name, err, filepath.Join(dir, "report.html"))
		return r
	}
	t.Logf("locktest: %s: %s, as expected (%s); covered %s in %s%s; time to notice: %s", name, r.Class, r.Summary, r.Coverage,
		time.Duration(out.History.Meta.DurationNs).Round(100*time.Millisecond), map[bool]string{true: ", the goal met (UntilCovered)"}[r.Coverage.Covered], r.TimeToNotice)
	return r
}

func outRoot(dir string) string {
	if dir != "" {
		return dir
	}
	if dir := os.Getenv("LOCKTEST_OUT"); dir != "" {
		return dir
	}
	return filepath.Join(os.TempDir(), "locktest")
}

// replayCommand runs t again; the seed is the scenario's, so the run
// repeats as far as the machine's timing lets it.
func replayCommand(t testing.TB, name string, seed int64) string {
	parts := strings.Split(t.Name(), "/")
	for i, p := range parts {
		parts[i] = "^" + regexp.QuoteMeta(p) + "$"
	}
	return fmt.Sprintf("go test -run '%s' (%s, seed %d)", strings.Join(parts, "/"), name, seed)
}

// logWriter passes start-up lines (image builds) to the test's log.
type logWriter struct{ t testing.TB }

func (w logWriter) Write(p []byte) (int, error) {
	w.t.Helper()
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}
