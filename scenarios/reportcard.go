package scenarios

import (
	"slices"
	"time"

	"github.com/lockcheck/lockcheck/scenarios/fault"
	"github.com/lockcheck/lockcheck/scenarios/lockclient"
	"github.com/lockcheck/lockcheck/topology"
)

// PythonLock is redis-py's Lock, driven through the shipped adapter.
const PythonLock = "external:/usr/bin/python3 adapters/python/redis_py_adapter.py --mode lock"

// ReportCardClients are the report card's rows: the lock libraries
// lockcheck drives (redsync, redislock, valkeylock, redis-py's Lock,
// Valkey GLIDE's Go client: on the cluster alone, since it has no
// Sentinel mode) and the built-in native and fenced clients as
// references.
var ReportCardClients = []string{"redsync", "redislock", "valkeylock", PythonLock, "glide", "native", "fenced"}

// NoticeOf says how a client tells its holder that its lock is gone: the
// kind's own (lockclient.Traits.Notice), or for redis-py's Lock through
// the adapter, the library's.
func NoticeOf(client string) string {
	if client == PythonLock {
		return "Lock.extend and Lock.reacquire raise LockNotOwnedError, Lock.release raises LockNotOwnedError; Lock.owned() asks the server; no callback"
	}
	tr, _ := lockclient.TraitsOf(client)
	return tr.Notice
}

// ReportCardFaults are the fault families a user of a lock meets, in the
// card's order ("" is a run with no fault); unload-lua stands for a build
// without Lua.
var ReportCardFaults = []string{"", fault.KillPrimary.Name(), fault.RestartPrimary.Name(), fault.ClockJump.Name(), fault.PauseClient.Name(),
	fault.PartitionPrimary.Name(), fault.ScriptFlush.Name(), fault.UnloadLua.Name(), fault.Latency.Name()}

// needsLua says whether a card client uses scripts: its kind's needs, or
// for redis-py's Lock, the library's (it releases and extends by script).
func needsLua(client string) bool {
	if client == PythonLock {
		return true
	}
	tr, _ := lockclient.TraitsOf(client)
	return slices.Contains(tr.Needs, lockclient.CapLua)
}

// ReportCardTopologies are the deployments the card covers.
var ReportCardTopologies = []topology.Kind{topology.Sentinel, topology.Cluster}

// reportCardScenario is the default workload (stalls, late holds, pauses
// inside lock calls: every timeout path of a library) with a 5 s lease,
// longer than a failover here, and 20 s for one fault step and its
// aftermath.
func reportCardScenario(k topology.Kind, f string) Scenario {
	s := Scenario{
		ServerSettings:  ServerSettings{Topology: k},
		TrafficSettings: TrafficSettings{TTL: 5 * time.Second, Duration: 20 * time.Second},
	}
	if f != "" {
		s.Faults = []string{f}
	}
	return s
}

// ReportCardClaims are the card's cells, a claim per topology and fault,
// run by every client. Every client is held to the default gate
// (lock-correct) but where the fault can hand one lock to two clients
// (fault.MayHandLockTwice): no unfenced lock can help that, so the
// unfenced clients' figures there are measured, not judged, and the
// fenced client, whose fence must stop the stale holder, is judged apart.
func ReportCardClaims() []Claim {
	var out []Claim
	for _, k := range ReportCardTopologies {
		clients := ReportCardClients
		if k == topology.Sentinel {
			clients = slices.DeleteFunc(slices.Clone(clients), func(c string) bool { return c == "glide" })
		}
		unfenced := slices.DeleteFunc(slices.Clone(clients), func(c string) bool { return c == "fenced" })
		for _, f := range ReportCardFaults {
			name, says := string(k)+"/"+cardFaultName(f), "the default workload with no fault"
			if ft, err := fault.Lookup(f); err == nil {
				says = describe(ft)
			}
			s := reportCardScenario(k, f)
			if f == fault.UnloadLua.Name() {
				// Only a library that scripts meets a build without Lua, and
				// it cannot release or extend there: measured, not judged.
				out = append(out, Claim{Name: name, Says: says + "; only the libraries that script run it, measured, not judged", Expect: ExpectMeasured,
					Clients: slices.DeleteFunc(slices.Clone(clients), func(c string) bool { return !needsLua(c) }), Scenario: s})
				continue
			}
			if !fault.MayHandLockTwice(f) {
				out = append(out, Claim{Name: name, Says: says, Expect: ExpectGateMet, Clients: clients, Scenario: s})
				continue
			}
			out = append(out,
				Claim{Name: name, Says: says + "; " + handsTwice(f), Expect: ExpectMeasured, Clients: unfenced, Scenario: s},
				Claim{Name: name + "/fenced", Says: says + "; the fence stops the stale holder", Expect: ExpectGateMet, Clients: []string{"fenced"}, Scenario: s})
		}
	}
	return out
}

// handsTwice says how a fault hands the lock to two clients.
func handsTwice(f string) string {
	if fault.HandsLockTwice(f) {
		return "it hands the lock to two clients by design"
	}
	return "it can hand the lock to two clients (a failover that drops the isolated primary's writes)"
}

// cardFaultName is a fault's column name ("none" for no fault).
func cardFaultName(f string) string {
	if f == "" {
		return "none"
	}
	return f
}
