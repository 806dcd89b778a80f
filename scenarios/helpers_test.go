package scenarios

import (
	"context"
	"io"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/lockcheck/lockcheck/scenarios/internal/testserver"
	"github.com/lockcheck/lockcheck/scenarios/lockclient"
	"github.com/lockcheck/lockcheck/topology"
)

// The servers and the looks at their keys are testserver's.
var (
	startStandalone = testserver.Standalone
	direct          = testserver.Direct
	flushAll        = testserver.FlushAll
	pttl            = testserver.PTTL
	pexpireTime     = testserver.PExpireTime
	awaitGone       = testserver.AwaitGone
	get             = testserver.Get
	pythonAdapter   = testserver.PythonAdapter
	longTests       = testserver.Long
)

func TestMain(m *testing.M) {
	code := m.Run()
	removeShared()
	os.Exit(code)
}

// shared holds the standalone servers that the tests needing only a clean
// key space share, one per build: the first test that asks starts it, and
// it is removed when the package's tests end (TestMain) or on Ctrl-C.
var shared = struct {
	sync.Mutex
	eng     *topology.Engine
	engErr  error
	unwatch func()
	topos   map[string]*topology.Topology
	failed  map[string]error
}{topos: map[string]*topology.Topology{}, failed: map[string]error{}}

// sharedStandalone is a standalone server of build that t shares with the
// package's other tests, as a new one would be for what t looks at: no
// keys and no cached scripts (FLUSHALL, SCRIPT FLUSH). Tests run one at a
// time, so no other test uses it meanwhile. A test that stops, pauses or
// reconfigures its server starts its own (startStandalone).
func sharedStandalone(t testing.TB, build string) *topology.Topology {
	t.Helper()
	topo := startShared(t, build)
	raw := direct(t, topo)
	flushAll(t, raw)
	if err := raw.Do(context.Background(), raw.B().ScriptFlush().Build()).Error(); err != nil {
		t.Fatal(err)
	}
	return topo
}

func startShared(t testing.TB, build string) *topology.Topology {
	t.Helper()
	shared.Lock()
	defer shared.Unlock()
	if shared.eng == nil && shared.engErr == nil {
		shared.eng, shared.engErr = topology.Connect(context.Background(), nil)
		if shared.engErr == nil {
			shared.unwatch = shared.eng.RemoveOnInterrupt()
		}
	}
	if shared.engErr != nil {
		t.Skip("docker unavailable: " + shared.engErr.Error())
	}
	if err := shared.failed[build]; err != nil {
		t.Fatalf("the shared %s did not start: %v", build, err)
	}
	if topo := shared.topos[build]; topo != nil {
		return topo
	}
	// As testserver.Start does, but for the package's life: a build whose
	// image cannot be had fails the test.
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	b, err := topology.Lookup(build)
	if err != nil {
		t.Fatal(err)
	}
	img, err := shared.eng.Obtain(ctx, b, topology.Sources{}, io.Discard)
	if err != nil {
		shared.failed[build] = err
		t.Fatalf("image for %s: %v", build, err)
	}
	topo, err := topology.Start(ctx, shared.eng, b, img.Ref, topology.Standalone, topology.Options{})
	if err != nil {
		shared.failed[build] = err
		t.Fatalf("start %s standalone: %v", build, err)
	}
	shared.topos[build] = topo
	return topo
}

// removeShared removes every shared server, and says so when one stays.
func removeShared() {
	shared.Lock()
	defer shared.Unlock()
	if shared.eng == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for build, topo := range shared.topos {
		if err := topo.Terminate(ctx); err != nil {
			os.Stderr.WriteString("terminate the shared " + build + " standalone: " + err.Error() + "\n")
		}
	}
	shared.unwatch()
	shared.eng.Close()
}

func newTestClient(t testing.TB, kind string, cfg lockclient.Config) lockclient.Client {
	t.Helper()
	if cfg.StderrDir == "" {
		cfg.StderrDir = t.TempDir()
	}
	c, err := lockclient.NewClient(kind, cfg)
	if err != nil {
		t.Fatalf("new client %s: %v", kind, err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// adversarial turns on what a correct client must survive besides the
// defaults: holds from TTL/50 to 3 TTL, a tenth of them stalled and a
// tenth frozen inside a lock call.
func adversarial(s Scenario) Scenario {
	s.WorkMin, s.WorkMax = s.TTL/50, 3*s.TTL
	s.StallRate, s.PauseRate = 0.1, 0.1
	return s
}
