package lockclient

import (
	"os"
	"strings"
	"testing"

	"github.com/lockcheck/lockcheck/scenarios/internal/testserver"
)

// The servers and the looks at their keys are testserver's.
var (
	startTopology       = testserver.Start
	startStandalone     = testserver.Standalone
	direct              = testserver.Direct
	sharedStandalone    = testserver.Shared
	flushAll            = testserver.FlushAll
	pttl                = testserver.PTTL
	awaitGone           = testserver.AwaitGone
	get                 = testserver.Get
	pythonAdapter       = testserver.PythonAdapter
	pythonKindIfPresent = testserver.PythonKindIfPresent
)

func TestMain(m *testing.M) {
	code := m.Run()
	testserver.RemoveShared()
	os.Exit(code)
}

func newTestClient(t testing.TB, kind string, cfg Config) Client {
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

// kindLabel names a kind in a subtest's name.
func kindLabel(kind string) string {
	if strings.HasPrefix(kind, ExternalPrefix) {
		return "external-python"
	}
	return kind
}
