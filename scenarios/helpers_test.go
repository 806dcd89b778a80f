package scenarios

import (
	"os"
	"testing"

	"github.com/lockcheck/lockcheck/scenarios/internal/testserver"
	"github.com/lockcheck/lockcheck/scenarios/lockclient"
)

// The servers and the looks at their keys are testserver's.
var (
	startStandalone  = testserver.Standalone
	direct           = testserver.Direct
	sharedStandalone = testserver.Shared
	flushAll         = testserver.FlushAll
	pttl             = testserver.PTTL
	pexpireTime      = testserver.PExpireTime
	awaitGone        = testserver.AwaitGone
	get              = testserver.Get
	pythonAdapter    = testserver.PythonAdapter
	longTests        = testserver.Long
)

func TestMain(m *testing.M) {
	code := m.Run()
	testserver.RemoveShared()
	os.Exit(code)
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
