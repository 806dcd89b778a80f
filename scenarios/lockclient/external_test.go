package lockclient

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/lockcheck/lockcheck/history"
	"github.com/lockcheck/lockcheck/topology"
)

// TestExternalProtocol drives a stand-in adapter: replies map to outcomes,
// a hang or a death is Unknown and the process is replaced, and stderr is
// kept. Every budget is seconds long, so that only the hang outlasts one.
func TestExternalProtocol(t *testing.T) {
	cfg := Config{Topology: topology.Sentinel, Addrs: []string{"127.0.0.1:1"}, MasterSet: "mymaster", ID: 4,
		AddrMap: map[string]string{"10.0.0.1:6379": "127.0.0.1:2"}, Timeout: 2 * time.Second, AdapterGrace: time.Second,
		StderrDir: t.TempDir()}
	c := newTestClient(t, ExternalPrefix+"/bin/sh testdata/fake_adapter.sh", cfg)
	ext := c.(*external)
	ctx := context.Background()
	if c.Name() != "external:fake 1" {
		t.Fatalf("name %q", c.Name())
	}
	if r := c.Acquire(ctx, "lock:{k1}", time.Second); r.Outcome != history.OK || r.Token != "t1" || !r.HasFence || r.Fence != 0 {
		t.Fatalf("acquire: %+v", r)
	}
	if r := c.Extend(ctx, "lock:{k1}", "t1", time.Second); r.Outcome != history.Fail || r.Err != "" {
		t.Fatalf("extend: %+v", r)
	}
	if r := c.Release(ctx, "lock:{k1}", "t1"); r.Outcome != history.Fail || !strings.Contains(r.Err, "unknown command 'DELIFEQ'") {
		t.Fatalf("release: %+v", r)
	}
	start := time.Now()
	if r := c.Acquire(ctx, "hang", time.Second); r.Outcome != history.Unknown || !strings.Contains(r.Err, "did not answer within 3s") {
		t.Fatalf("hanging acquire: %+v", r)
	}
	// The stand-in sleeps 30 s on "hang": the call must end at its budget.
	if d := time.Since(start); d > 20*time.Second {
		t.Fatalf("a hanging adapter held the call for %v", d)
	}
	if r := c.Acquire(ctx, "lock:{k1}", time.Second); r.Outcome != history.OK {
		t.Fatalf("acquire after replacement: %+v", r)
	}
	if r := c.Release(ctx, "die", "t1"); r.Outcome != history.Unknown || !strings.Contains(r.Err, "closed its output") {
		t.Fatalf("release to a dying adapter: %+v", r)
	}
	if r := c.Release(ctx, "garbage", "t1"); r.Outcome != history.Unknown {
		t.Fatalf("garbage reply: %+v", r)
	}
	if r := c.Acquire(ctx, "lock:{k1}", time.Second); r.Outcome != history.OK {
		t.Fatalf("acquire after death: %+v", r)
	}
	if n := ext.Counts()["adapter_restarts"]; n != 3 {
		t.Fatalf("%d restarts, want 3", n)
	}
	c.Close()
	log, err := os.ReadFile(ext.StderrPath())
	if err != nil {
		t.Fatal(err)
	}
	// the adapter is given its tap's addresses, on loopback, not the
	// servers' own
	for _, want := range []string{`"op":"init","v":1,"topology":"sentinel","addrs":["127.0.0.1:`, `"master_set":"mymaster","client":4,"addr_map":{"10.0.0.1:6379":"127.0.0.1:`, `"timeout_ms":2000`,
		`"op":"close"`, "adapter replaced"} {
		if !strings.Contains(string(log), want) {
			t.Errorf("stderr file lacks %s:\n%s", want, log)
		}
	}
}

func TestExternalInitFailure(t *testing.T) {
	_, err := NewClient(ExternalPrefix+"/bin/false", Config{StderrDir: t.TempDir()})
	if err == nil || !strings.Contains(err.Error(), "external:/bin/false") {
		t.Fatalf("init of an adapter that exits: %v", err)
	}
}
