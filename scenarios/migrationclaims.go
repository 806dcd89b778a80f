package scenarios

import (
	"slices"
	"time"

	"github.com/lockcheck/lockcheck/scenarios/fault"
	"github.com/lockcheck/lockcheck/topology"
)

// MigrationClients are the clients the migrations table runs under every
// fault that moves a slot: the built-in references (native, fenced, lua,
// delex) and the Go libraries lockcheck drives.
var MigrationClients = []string{"native", "fenced", "lua", "delex", "redsync", "redislock", "valkeylock"}

// MigrationFaults are the faults that move the lock key's slot, in the
// order the table shows them.
func MigrationFaults() []fault.Fault {
	return []fault.Fault{fault.MigrateSlot, fault.MigrateSlotLegacy, fault.CancelMigration, fault.MigrateAndFailover, fault.ScaleOut, fault.ScaleIn}
}

// migrationScenario is the default workload (stalls, late holds, pauses
// inside lock calls: every timeout path of a client) on a cluster of
// three primaries with a replica each, a 2 s lease and one fault step
// (the schedule puts it 3 to 5.5 s in); 12 s leave the fault and a lease
// after it, and the run goes on past them until its aftermath is over.
func migrationScenario(f fault.Fault, server string) Scenario {
	return Scenario{
		ServerSettings:  ServerSettings{Server: server, Topology: topology.Cluster},
		FaultSettings:   FaultSettings{Faults: []string{f.Name()}},
		TrafficSettings: TrafficSettings{TTL: 2 * time.Second, Duration: 12 * time.Second},
	}
}

// MigrationClaims are the migrations table's rows: each fault that moves
// the lock key's slot, by every client of MigrationClients but delex
// (DELEX is Valkey 9.2's and Redis 8.4's: the newest Valkey here lacks
// it), on the measurement's build (valkey-9.1), and migrate-slot on
// redis-8.6 for Redis's own atomic migration by every client that runs
// there (delex included; native and fenced release with DELIFEQ, which
// Redis lacks). Every client is held to the default gate (lock-correct)
// except under migrate-and-failover, whose SIGKILL of a primary may lose
// a lock not yet on its replica (the failover race of kill-primary,
// which no client can prevent without a fence): there the unfenced
// clients' figures are measured, not judged.
func MigrationClaims() []Claim {
	var out []Claim
	add := func(f fault.Fault, server, name string, clients []string) {
		s := migrationScenario(f, server)
		if f.Name() != fault.MigrateAndFailover.Name() {
			out = append(out, Claim{Name: name, Says: describe(f), Expect: ExpectGateMet, Clients: clients, Scenario: s})
			return
		}
		unfenced := slices.DeleteFunc(slices.Clone(clients), func(c string) bool { return c == "fenced" })
		out = append(out,
			Claim{Name: name, Says: describe(f) + "; a lock not yet on the replica may be lost, as in kill-primary", Expect: ExpectMeasured, Clients: unfenced, Scenario: s},
			Claim{Name: name + "/fenced", Says: describe(f) + "; the fence stops a stale holder", Expect: ExpectGateMet, Clients: []string{"fenced"}, Scenario: s})
	}
	noDelex := slices.DeleteFunc(slices.Clone(MigrationClients), func(c string) bool { return c == "delex" })
	for _, f := range MigrationFaults() {
		add(f, "", f.Name(), noDelex)
	}
	// native and fenced release with DELIFEQ, which Redis lacks
	onRedis := slices.DeleteFunc(slices.Clone(MigrationClients), func(c string) bool { return c == "native" || c == "fenced" })
	add(fault.MigrateSlot, "redis-8.6", fault.MigrateSlot.Name()+"@redis-8.6", onRedis)
	return out
}

// describe is the fault's own one-line description.
func describe(f fault.Fault) string {
	if d, ok := f.(fault.Describer); ok {
		return d.Description()
	}
	return f.Name()
}
