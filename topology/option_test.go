package topology

import (
	"slices"
	"testing"
	"time"
)

// TestOptionsAddUp: single options set what they name on top of an
// Options value, and never write into the caller's maps.
func TestOptionsAddUp(t *testing.T) {
	base := Options{NodeImages: map[string]string{"n1": "old"}, ServerConfig: []string{"a yes"}}
	c := newStartConfig([]Option{
		WithOptions(base), WithImage("img"), WithNodes(5), WithAOF(FsyncEverysec), WithServerConfig("b no"),
		WithNodeConfig("n2", "replica-priority 0"), WithNodeImage("n2", "older"), WithReinstallImage("valkey-9.1", "new"),
		WithClientProxy(), WithoutClockShim(), WithDownAfter(2 * time.Second), WithNodeTimeout(3 * time.Second), WithHealthTimeout(time.Minute),
	})
	o := c.opts
	if c.image != "img" || o.Nodes != 5 || !o.AOF || o.Fsync != FsyncEverysec || !o.ProxyClients || !o.NoClockShim {
		t.Fatalf("config %+v, image %q", o, c.image)
	}
	if o.DownAfter != 2*time.Second || o.NodeTimeout != 3*time.Second || o.HealthTimeout != time.Minute {
		t.Fatalf("timings %v %v %v", o.DownAfter, o.NodeTimeout, o.HealthTimeout)
	}
	if !slices.Equal(o.ServerConfig, []string{"a yes", "b no"}) || !slices.Equal(o.NodeConfig["n2"], []string{"replica-priority 0"}) {
		t.Fatalf("config lines %v %v", o.ServerConfig, o.NodeConfig)
	}
	if o.NodeImages["n1"] != "old" || o.NodeImages["n2"] != "older" || o.Images["valkey-9.1"] != "new" {
		t.Fatalf("images %v %v", o.NodeImages, o.Images)
	}
	if len(base.NodeImages) != 1 || len(base.ServerConfig) != 1 {
		t.Fatalf("the caller's Options changed: %+v", base)
	}
}

// TestWithOptionsReplaces: WithOptions sets every tuning, so what came
// before it is gone.
func TestWithOptionsReplaces(t *testing.T) {
	c := newStartConfig([]Option{WithClientProxy(), WithOptions(Options{Nodes: 4})})
	if c.opts.ProxyClients || c.opts.Nodes != 4 {
		t.Fatalf("%+v", c.opts)
	}
}
