package scenarios

import (
	"time"

	"github.com/lockcheck/lockcheck/scenarios/fault"
	"github.com/lockcheck/lockcheck/scenarios/lockclient"
	"github.com/lockcheck/lockcheck/topology"
)

// Claim is one thing the literature says about Redlock, the scenario that
// tests it, and what the literature expects to see there: the claims
// table (lockcheck claims) runs each over many seeds and reports what
// happened, whatever it is.
type Claim struct {
	// Name is the row's short name, for --only and the table.
	Name string
	// Says is the claim in words.
	Says string
	// Expect is what the literature expects the scenario to show.
	Expect Expected
	// Clients run the scenario in turn, each over every seed.
	Clients []string
	// Scenario is the run's scenario; its Client and Seed are set per run.
	Scenario Scenario
}

// Expected is what a claim's scenario should show over its seeds.
type Expected string

const (
	// ExpectSafe: every run safe (no check failed).
	ExpectSafe Expected = "safe"
	// ExpectGateMet: every run meets the default gate (lock-correct).
	ExpectGateMet Expected = "lock-correct"
	// ExpectDoubleHolder: double holders appear.
	ExpectDoubleHolder Expected = "double holders"
	// ExpectStaleReached: stale writes reach an unfenced resource.
	ExpectStaleReached Expected = "stale writes reach the resource"
	// ExpectStaleStopped: the fence rejects stale writes, none gets
	// through.
	ExpectStaleStopped Expected = "stale writes stopped by the fence"
	// ExpectMeasured: nothing is claimed; the figures are what the
	// scenario shows (a fault that may lose a lock whatever the client).
	ExpectMeasured Expected = "measured"
)

// RedlockClients are the Redlock implementations every claim runs: the
// built-in client, which follows the published algorithm, and redsync
// with one pool per node.
var RedlockClients = []string{"redlock", "redsync"}

// redlockFaultScenario is a quiet workload (no stalls, no pauses inside
// lock calls, so a finding is the fault's) on three independent primaries
// with one Redlock fault. Every hold works its whole lease (10 s, extends
// every 3.3 s), so a node back from a restart (2-3 s on a loaded machine)
// finds the holder still working, and only its next extend can tell it
// the lock is lost; contenders retry within 50 ms, so one is there when
// the node is back; 20 s hold one fault (each strikes 3-5.5 s in) and
// what comes of it.
func redlockFaultScenario(f string, aof bool, fsync topology.Fsync) Scenario {
	ttl := 10 * time.Second
	s := Scenario{
		ServerSettings:  ServerSettings{Topology: topology.Redlock, AOF: aof, Fsync: fsync},
		TrafficSettings: TrafficSettings{TTL: ttl, WorkMin: ttl, WorkMax: ttl, Duration: 20 * time.Second, BackoffMax: 50 * time.Millisecond},
	}.Quiet()
	if f != "" {
		s.Faults = []string{f}
	}
	return s
}

// redlockPauseScenario freezes one holder for 2 TTL (pause-client) in a
// quiet workload: a 5 s lease, and 20 s for the holder to wake and write.
func redlockPauseScenario() Scenario {
	return Scenario{
		ServerSettings:  ServerSettings{Topology: topology.Redlock},
		FaultSettings:   FaultSettings{Faults: []string{fault.PauseClient.Name()}},
		TrafficSettings: TrafficSettings{TTL: 5 * time.Second, Duration: 20 * time.Second, BackoffMax: 50 * time.Millisecond},
	}.Quiet()
}

// RedlockClaims lists the claims, in the article's order.
func RedlockClaims() []Claim {
	pause := redlockPauseScenario()
	fencedPause := pause
	quiet := redlockFaultScenario("", false, "")
	quiet.Duration = 12 * time.Second
	fencedPause.Topology = topology.Standalone
	return []Claim{
		{Name: "no-fault", Says: "Redlock with every node up and no client paused is safe",
			Expect: ExpectSafe, Clients: RedlockClients, Scenario: quiet},
		{Name: "default-gate", Says: "the default gate (stalls, pauses inside lock calls) finds no broken promise of a correct Redlock",
			Expect:  ExpectGateMet,
			Clients: RedlockClients, Scenario: Scenario{ServerSettings: ServerSettings{Topology: topology.Redlock}, TrafficSettings: TrafficSettings{TTL: 500 * time.Millisecond, Duration: 12 * time.Second}}},
		{Name: "kill-node", Says: "Redlock answers the single point of failure: one node killed (and back with its AOF) is safe",
			Expect: ExpectSafe, Clients: RedlockClients, Scenario: redlockFaultScenario(fault.KillNode.Name(), true, topology.FsyncEverysec)},
		{Name: "crash-restart-no-aof", Says: "a node that restarts at once without its data breaks Redlock",
			Expect: ExpectDoubleHolder, Clients: RedlockClients, Scenario: redlockFaultScenario(fault.CrashRestart.Name(), false, "")},
		{Name: "crash-restart-always", Says: "fsync on every write keeps Redlock safe through a power loss",
			Expect: ExpectSafe, Clients: RedlockClients, Scenario: redlockFaultScenario(fault.CrashRestart.Name(), true, topology.FsyncAlways)},
		{Name: "crash-restart-late", Says: "a crashed node kept out of service for longer than the TTL keeps Redlock safe without fsync",
			Expect: ExpectSafe, Clients: RedlockClients, Scenario: redlockFaultScenario(fault.CrashRestartLate.Name(), false, "")},
		{Name: "clock-jump-node", Says: "Redlock assumes clocks drift only slightly: one node's clock jump breaks it",
			Expect: ExpectDoubleHolder, Clients: RedlockClients, Scenario: redlockFaultScenario(fault.ClockJumpNode.Name(), false, "")},
		{Name: "pause-client", Says: "Redlock does not answer the paused client: its writes after the lease are stale",
			Expect: ExpectStaleReached, Clients: RedlockClients, Scenario: pause},
		{Name: "pause-client-fenced", Says: "a fence rejects the stale holder (a fenced lock on one server, for comparison)",
			Expect: ExpectStaleStopped, Clients: []string{"fenced"}, Scenario: fencedPause},
	}
}

// RedlockMutants are the Redlock mutants, each judged by the default gate
// in the default workload (RedlockMutantScenario).
var RedlockMutants = []string{"mutant-redlock-no-validity", "mutant-redlock-any-node", "mutant-redlock-fixed-token"}

// RedlockMutantScenario is the default gate's workload on three
// independent primaries, with no fault: each mutant's bug needs no more.
func RedlockMutantScenario() Scenario {
	return Scenario{ServerSettings: ServerSettings{Topology: topology.Redlock}, TrafficSettings: TrafficSettings{TTL: 500 * time.Millisecond, Duration: 12 * time.Second}}
}

// MitigationClaims are the article's mitigations of the failover race,
// each a claim that it narrows the window and does not close it: on
// Sentinel and on the cluster, under kill-primary (the race made likely
// by design), a quiet workload of the native client with none, WAIT 1,
// WAITAOF 1 1 (AOF on), min-replicas-to-write 1, WAIT 1 giving the lock
// back when short, and the fenced client, whose double holders must not
// reach the resource. The lease (15 s) outlasts the failover, and 20 s
// hold the one kill and the race after it.
func MitigationClaims() []Claim {
	wait := lockclient.WaitOptions{Replicas: 1, Timeout: 100 * time.Millisecond, OnShort: lockclient.WaitGoOn}
	waitAOF := lockclient.WaitOptions{AOF: true, Local: 1, Replicas: 1, Timeout: 100 * time.Millisecond, OnShort: lockclient.WaitGoOn}
	giveBack := wait
	giveBack.OnShort = lockclient.WaitRelease
	var out []Claim
	for _, k := range []topology.Kind{topology.Sentinel, topology.Cluster} {
		base := Scenario{ServerSettings: ServerSettings{Topology: k}, FaultSettings: FaultSettings{Faults: []string{fault.KillPrimary.Name()}}, TrafficSettings: TrafficSettings{TTL: 15 * time.Second, Duration: 20 * time.Second}}.Quiet()
		with := func(f func(*Scenario)) Scenario {
			s := base
			f(&s)
			return s
		}
		native := []string{"native"}
		out = append(out,
			Claim{Name: string(k) + "/none", Says: "without a mitigation, the failover hands the lock to a second holder",
				Expect: ExpectDoubleHolder, Clients: native, Scenario: base},
			Claim{Name: string(k) + "/wait", Says: "WAIT 1 after the acquire narrows the window, does not close it",
				Expect: ExpectDoubleHolder, Clients: native, Scenario: with(func(s *Scenario) { s.Wait = wait })},
			Claim{Name: string(k) + "/waitaof", Says: "WAITAOF 1 1 (AOF on) narrows the window, does not close it",
				Expect: ExpectDoubleHolder, Clients: native, Scenario: with(func(s *Scenario) { s.AOF, s.Wait = true, waitAOF })},
			Claim{Name: string(k) + "/min-replicas", Says: "min-replicas-to-write 1 narrows the window, does not close it",
				Expect: ExpectDoubleHolder, Clients: native, Scenario: with(func(s *Scenario) { s.MinReplicas = 1 })},
			Claim{Name: string(k) + "/wait-give-back", Says: "WAIT 1, giving the lock back when short, narrows the window at the cost of refusals",
				Expect: ExpectDoubleHolder, Clients: native, Scenario: with(func(s *Scenario) { s.Wait = giveBack })},
			Claim{Name: string(k) + "/fenced", Says: "a fence rejects the stale holder: its double holders reach no resource",
				Expect: ExpectStaleStopped, Clients: []string{"fenced"}, Scenario: base},
		)
	}
	return out
}
