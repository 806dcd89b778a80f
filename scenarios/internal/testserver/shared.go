package testserver

import (
	"context"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/lockcheck/lockcheck/topology"
)

// shared holds the standalone servers that the tests needing only a clean
// key space share, one per build: the first test that asks starts it, and
// it is removed when the package's tests end (RemoveShared, from the
// package's TestMain) or on Ctrl-C (the engine's interrupt watch).
var shared = struct {
	sync.Mutex
	topos  map[string]*topology.Topology
	failed map[string]error
}{topos: map[string]*topology.Topology{}, failed: map[string]error{}}

// Shared is a standalone server of build that t shares with the package's
// other tests, as a new one would be for what t looks at: no keys and no
// cached scripts (FLUSHALL, SCRIPT FLUSH). Tests run one at a time, so no
// other test uses it meanwhile. A test that stops, pauses or reconfigures
// its server starts its own (Standalone).
func Shared(t testing.TB, build string) *topology.Topology {
	t.Helper()
	topo := startShared(t, build)
	raw := Direct(t, topo)
	FlushAll(t, raw)
	if err := raw.Do(context.Background(), raw.B().ScriptFlush().Build()).Error(); err != nil {
		t.Fatal(err)
	}
	return topo
}

func startShared(t testing.TB, build string) *topology.Topology {
	t.Helper()
	e := engine(t)
	shared.Lock()
	defer shared.Unlock()
	if err := shared.failed[build]; err != nil {
		t.Fatalf("the shared %s did not start: %v", build, err)
	}
	if topo := shared.topos[build]; topo != nil {
		return topo
	}
	// As Start does, but for the package's life: a build whose image
	// cannot be had fails the test.
	topo, err := start(e, build, topology.Standalone)
	if err != nil {
		if topo != nil {
			topo.Terminate(context.Background())
		}
		shared.failed[build] = err
		t.Fatal(err)
	}
	shared.topos[build] = topo
	return topo
}

// RemoveShared removes every shared server, and says so when one stays:
// the package's TestMain calls it after its tests.
func RemoveShared() {
	shared.Lock()
	defer shared.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for build, topo := range shared.topos {
		if err := topo.Terminate(ctx); err != nil {
			os.Stderr.WriteString("terminate the shared " + build + " standalone: " + err.Error() + "\n")
		}
	}
	shared.topos = map[string]*topology.Topology{}
}
