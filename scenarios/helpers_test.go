package scenarios

import (
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/lockcheck/lockcheck/topology"
	"github.com/valkey-io/valkey-go"
)

var (
	engOnce sync.Once
	eng     *topology.Engine
	engErr  error
)

// engine connects once per test binary; only an engine that does not
// answer skips a test.
func engine(t testing.TB) *topology.Engine {
	t.Helper()
	engOnce.Do(func() { eng, engErr = topology.Connect(context.Background(), nil) })
	if engErr != nil {
		t.Skip("docker unavailable: " + engErr.Error())
	}
	return eng
}

// startTopology starts a topology of build for this test alone and removes
// it when the test ends. A build whose image cannot be had fails the test:
// an unavailable server is never a pass.
func startTopology(t testing.TB, build string, kind topology.Kind) *topology.Topology {
	t.Helper()
	e := engine(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	b, err := topology.Lookup(build)
	if err != nil {
		t.Fatal(err)
	}
	img, err := e.Obtain(ctx, b, topology.Sources{}, io.Discard)
	if err != nil {
		t.Fatalf("image for %s: %v", build, err)
	}
	topo, err := topology.Start(ctx, e, b, img.Ref, kind, topology.Options{})
	if topo != nil {
		t.Cleanup(func() {
			cctx, ccancel := context.WithTimeout(context.Background(), time.Minute)
			defer ccancel()
			if err := topo.Terminate(cctx); err != nil {
				t.Errorf("terminate %s %s: %v", build, kind, err)
			}
		})
	}
	if err != nil {
		t.Fatalf("start %s %s: %v", build, kind, err)
	}
	return topo
}

func startStandalone(t testing.TB, build string) *topology.Topology {
	return startTopology(t, build, topology.Standalone)
}

// direct is a plain client to the topology for looking at keys behind the
// lock clients' backs.
func direct(t testing.TB, topo *topology.Topology) valkey.Client {
	t.Helper()
	c, err := valkey.NewClient(topo.ClientOption())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

func flushAll(t testing.TB, c valkey.Client) {
	t.Helper()
	if err := c.Do(context.Background(), c.B().Flushall().Build()).Error(); err != nil {
		t.Fatal(err)
	}
}

func pttl(t testing.TB, c valkey.Client, key string) int64 {
	t.Helper()
	n, err := c.Do(context.Background(), c.B().Pttl().Key(key).Build()).AsInt64()
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// pexpireTime is key's absolute deadline in Unix ms (-1: none, -2: no key).
func pexpireTime(t testing.TB, c valkey.Client, key string) int64 {
	t.Helper()
	n, err := c.Do(context.Background(), c.B().Arbitrary("PEXPIRETIME").Keys(key).Build()).AsInt64()
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// awaitGone waits until the server says key is gone (its lease ended),
// however long a loaded machine takes, within a minute.
func awaitGone(t testing.TB, c valkey.Client, key string) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for pttl(t, c, key) != -2 {
		if time.Now().After(deadline) {
			t.Fatalf("%s still there a minute later", key)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func get(t testing.TB, c valkey.Client, key string) (string, bool) {
	t.Helper()
	v, err := c.Do(context.Background(), c.B().Get().Key(key).Build()).ToString()
	if valkey.IsValkeyNil(err) {
		return "", false
	}
	if err != nil {
		t.Fatal(err)
	}
	return v, true
}

// pythonAdapter is the external kind that runs the example adapter with
// Debian's interpreter; tests that need it skip when python3-redis is
// missing and say how to install it.
func pythonAdapter(t testing.TB, args ...string) string {
	t.Helper()
	script, err := filepath.Abs("../adapters/python/redis_py_adapter.py")
	if err != nil {
		t.Fatal(err)
	}
	if err := exec.Command("/usr/bin/python3", "-c", "import redis").Run(); err != nil {
		t.Skip("Debian's python3-redis is not installed (apt-get install -y python3-redis): ", err)
	}
	kind := ExternalPrefix + "/usr/bin/python3 " + script
	for _, a := range args {
		kind += " " + a
	}
	return kind
}

// pythonKindIfPresent is pythonAdapter for callers that go on without it.
func pythonKindIfPresent() string {
	if exec.Command("/usr/bin/python3", "-c", "import redis").Run() != nil {
		return ""
	}
	script, err := filepath.Abs("../adapters/python/redis_py_adapter.py")
	if err != nil {
		return ""
	}
	return ExternalPrefix + "/usr/bin/python3 " + script
}

func newTestClient(t testing.TB, kind string, cfg ClientConfig) Client {
	t.Helper()
	if cfg.StderrDir == "" {
		cfg.StderrDir = t.TempDir()
	}
	c, err := NewClient(kind, cfg)
	if err != nil {
		t.Fatalf("new client %s: %v", kind, err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func longTests() bool { return os.Getenv("LOCKCHECK_LONG") == "1" }

// adversarial turns on what a correct client must survive besides the
// defaults: holds from TTL/50 to 3 TTL, a tenth of them stalled and a
// tenth frozen inside a lock call.
func adversarial(s Scenario) Scenario {
	s.WorkMin, s.WorkMax = s.TTL/50, 3*s.TTL
	s.StallRate, s.PauseRate = 0.1, 0.1
	return s
}
