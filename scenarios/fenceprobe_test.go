package scenarios

import (
	"context"
	"testing"
	"time"

	"github.com/lockcheck/lockcheck/scenarios/lockclient"
	"github.com/lockcheck/lockcheck/topology"
)

// An external adapter whose acquires carry a fence is a fenced client; a
// built-in kind says so itself, without a call.
func TestDrawsFences(t *testing.T) {
	kind := lockclient.ExternalPrefix + "/bin/sh lockclient/testdata/fake_adapter.sh"
	cfg := lockclient.Config{Topology: topology.Standalone, Addrs: []string{"127.0.0.1:1"}, Timeout: time.Second, StderrDir: t.TempDir()}
	c, err := lockclient.NewClient(kind, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if !drawsFences(context.Background(), kind, c, LockKey(0)) {
		t.Error("an adapter replying fences is not taken for a fenced client")
	}
	if drawsFences(context.Background(), "native", nil, LockKey(0)) || !drawsFences(context.Background(), "fenced", nil, LockKey(0)) {
		t.Error("a built-in kind's own word is not taken")
	}
}
