// Package locktest gates a Go lock library from its own tests: it starts
// real servers in containers, runs one of lockcheck's scenarios with the
// library's client doing every lock call, checks the recorded history,
// and fails the test with the checks' one-line reason and the run's
// folder (report.html), in the spirit of testing/fstest.
//
//	func TestMyLockUnderFailover(t *testing.T) {
//		locktest.Run(t, locktest.Scenario{
//			ServerSettings:  locktest.ServerSettings{Server: "valkey-9.1", Topology: "sentinel"},
//			ClientSettings:  locktest.ClientSettings{Fenced: true},
//			FaultSettings:   locktest.FaultSettings{Faults: []string{"kill-primary"}},
//			TrafficSettings: locktest.TrafficSettings{Duration: time.Minute},
//		}, newMyLockAdapter, locktest.ExpectFenceHolds)
//	}
//
// # The client's contract
//
// newClient is called once per logical client (Config.ID) with what the
// client needs to connect; Config.Option follows failovers and maps the
// addresses nodes announce to the host's ports, and Config.Addrs and
// Config.AddrMap serve other Go clients (go-redis and the like). One
// worker uses a Client at a time. Each call returns what the library
// told its caller, never an error:
//
//   - OK: the lock was acquired, extended or released. An acquire's
//     Result.Token is the value the library stored in the key the workload
//     named (the observer reads the key and compares; with Opaque it does
//     not); with Scenario.Fenced, an OK acquire also returns its fence
//     (Result.Fence, HasFence) and writes to the protected resource carry
//     it.
//   - Fail: the library says it certainly did not happen (the lock is
//     taken, the lease was lost, an error reply).
//   - Unknown: a timeout or a broken connection: it may have happened. The
//     checker treats it as maybe-happened, never as a lie.
//
// A call must return within Config.Timeout of its start (a library's own
// retries included); a call that does not is recorded as it ends.
//
// # Expectations
//
// A run passes or fails by one expectation alone. ExpectLockCorrect, the
// default, is what a correct lock still promises when its holders stall
// and freeze inside lock calls, as the default workload makes them: no
// two workers believe they hold at once, every reply is one the server
// could have given, no key without expiry or stuck, no refused command;
// an unfenced holder's write after its lease ended is allowed and
// reported (class stale-writes). ExpectSafe (every check passes) is for a
// quiet scenario (Scenario.Quiet()) or a fenced library; ExpectFenceHolds
// (two holders allowed under a fault, the fence stops the stale one; only
// with Scenario.Fenced) is what a fenced library gates on under
// kill-primary.
//
// # Environment
//
// Runs need a Docker engine (DOCKER_HOST is honoured) and the build's
// image, which lockcheck builds from Debian's packages where it can (a
// few minutes, once). Without either the test is skipped with the reason,
// unless LOCKTEST_REQUIRE is set, when it fails instead: a CI that means
// to gate must set it. Run folders go to LOCKTEST_OUT (default
// os.TempDir()/locktest), one per run, and stay there.
package locktest
