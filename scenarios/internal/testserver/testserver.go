// Package testserver starts real servers for the scenarios packages' tests
// and looks at their keys behind the lock clients' backs.
package testserver

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/valkey-io/valkey-go"

	"github.com/lockcheck/lockcheck/topology"
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
	engOnce.Do(func() {
		eng, engErr = topology.Connect(context.Background(), nil)
		if engErr == nil {
			eng.RemoveOnInterrupt() // for the test binary's life
		}
	})
	if engErr != nil {
		t.Skip("docker unavailable: " + engErr.Error())
	}
	return eng
}

// Start starts a topology of build for this test alone and removes it
// when the test ends. A build whose image cannot be had fails the test: an
// unavailable server is never a pass.
func Start(t testing.TB, build string, kind topology.Kind) *topology.Topology {
	t.Helper()
	topo, err := start(engine(t), build, kind)
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
		t.Fatal(err)
	}
	return topo
}

// start obtains build's image and starts kind on it.
func start(e *topology.Engine, build string, kind topology.Kind) (*topology.Topology, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	b, err := topology.Lookup(build)
	if err != nil {
		return nil, err
	}
	img, err := e.Obtain(ctx, b, topology.Sources{}, io.Discard)
	if err != nil {
		return nil, fmt.Errorf("image for %s: %w", build, err)
	}
	topo, err := topology.Start(ctx, e, b, kind, topology.WithImage(img.Ref))
	if err != nil {
		return topo, fmt.Errorf("start %s %s: %w", build, kind, err)
	}
	return topo, nil
}

// Standalone starts one server of build.
func Standalone(t testing.TB, build string) *topology.Topology {
	return Start(t, build, topology.Standalone)
}

// Direct is a plain client to the topology for looking at keys behind the
// lock clients' backs.
func Direct(t testing.TB, topo *topology.Topology) valkey.Client {
	t.Helper()
	c, err := valkey.NewClient(topo.ClientOption())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

// FlushAll empties the server c reaches.
func FlushAll(t testing.TB, c valkey.Client) {
	t.Helper()
	if err := c.Do(context.Background(), c.B().Flushall().Build()).Error(); err != nil {
		t.Fatal(err)
	}
}

// PTTL is key's remaining lease in ms (-1: none, -2: no key).
func PTTL(t testing.TB, c valkey.Client, key string) int64 {
	t.Helper()
	n, err := c.Do(context.Background(), c.B().Pttl().Key(key).Build()).AsInt64()
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// PExpireTime is key's absolute deadline in Unix ms (-1: none, -2: no key).
func PExpireTime(t testing.TB, c valkey.Client, key string) int64 {
	t.Helper()
	n, err := c.Do(context.Background(), c.B().Arbitrary("PEXPIRETIME").Keys(key).Build()).AsInt64()
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// AwaitGone waits until the server says key is gone (its lease ended),
// however long a loaded machine takes, within a minute.
func AwaitGone(t testing.TB, c valkey.Client, key string) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for PTTL(t, c, key) != -2 {
		if time.Now().After(deadline) {
			t.Fatalf("%s still there a minute later", key)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// Get is key's value and whether it exists.
func Get(t testing.TB, c valkey.Client, key string) (string, bool) {
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

// PythonAdapter is the external kind that runs the example adapter with
// Debian's interpreter, args appended; a test that needs it skips when
// python3-redis is missing and says how to install it.
func PythonAdapter(t testing.TB, args ...string) string {
	t.Helper()
	if err := exec.Command("/usr/bin/python3", "-c", "import redis").Run(); err != nil {
		t.Skip("Debian's python3-redis is not installed (apt-get install -y python3-redis): ", err)
	}
	kind, err := pythonKind()
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range args {
		kind += " " + a
	}
	return kind
}

// PythonKindIfPresent is PythonAdapter for callers that go on without it.
func PythonKindIfPresent() string {
	if exec.Command("/usr/bin/python3", "-c", "import redis").Run() != nil {
		return ""
	}
	kind, _ := pythonKind()
	return kind
}

// pythonKind finds the adapter from the repository's root, the first
// folder up from the test's that holds go.mod.
func pythonKind() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return "external:/usr/bin/python3 " + filepath.Join(dir, "adapters", "python", "redis_py_adapter.py"), nil
		}
		up := filepath.Dir(dir)
		if up == dir {
			return "", os.ErrNotExist
		}
		dir = up
	}
}

// Long says whether the long tests run (LOCKCHECK_LONG=1).
func Long() bool { return os.Getenv("LOCKCHECK_LONG") == "1" }
