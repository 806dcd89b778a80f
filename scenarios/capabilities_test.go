package scenarios

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/lockcheck/lockcheck/topology"
)

// TestProbeBuilds observes each build's lock commands, as
// valkey-semantics.md lists them.
func TestProbeBuilds(t *testing.T) {
	want := map[string]Capabilities{
		"valkey-8.0": {CapIFEQ: false, CapDELIFEQ: false, CapDELEX: false, CapLua: true},
		"valkey-8.1": {CapIFEQ: true, CapDELIFEQ: false, CapDELEX: false, CapLua: true},
		"valkey-9.1": {CapIFEQ: true, CapDELIFEQ: true, CapDELEX: false, CapLua: true},
		"redis-7.0":  {CapIFEQ: false, CapDELIFEQ: false, CapDELEX: false, CapLua: true},
		"redis-8.6":  {CapIFEQ: true, CapDELIFEQ: false, CapDELEX: true, CapLua: true},
	}
	for _, build := range []string{"valkey-8.0", "valkey-8.1", "valkey-9.1", "redis-7.0", "redis-8.6"} {
		t.Run(build, func(t *testing.T) {
			topo := startStandalone(t, build)
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			caps, err := Probe(ctx, topo.ClientOption())
			if err != nil {
				t.Fatal(err)
			}
			for cp, w := range want[build] {
				if caps[cp] != w {
					t.Errorf("%s %s: %s %v, want %v", build, topo.Version, cp, caps[cp], w)
				}
			}
			for _, kind := range Kinds() {
				if err := caps.Check(kind, build, topo.Version); err != nil {
					t.Logf("refused: %v", err)
				}
			}
		})
	}
}

// TestRefusalOnValkey80 is the one line a run prints instead of crashing
// when the build lacks what the client needs.
func TestRefusalOnValkey80(t *testing.T) {
	topo := startStandalone(t, "valkey-8.0")
	w := Workload{Scenario: Scenario{Client: "native", Duration: time.Second, TTL: 300 * time.Millisecond}}
	h, err := w.Run(context.Background(), ConfigFor(topo))
	if !errors.Is(err, ErrUnsupported) {
		t.Fatalf("native on valkey-8.0: history %v, error %v; want a refusal", h != nil, err)
	}
	want := "client native needs SET IFEQ (Valkey 8.1+, Redis 8.4+) and DELIFEQ (Valkey 9.0+); valkey-8.0 (" + topo.Version + ") has neither"
	if err.Error() != want {
		t.Fatalf("refusal %q, want %q", err, want)
	}
	t.Log(err)
}

// TestDelexOnRedis86 runs the delex client's commands where DELEX exists.
func TestDelexOnRedis86(t *testing.T) {
	topo := startTopology(t, "redis-8.6", topology.Standalone)
	raw := direct(t, topo)
	same := func(n string) string { return n }
	testClientContract(t, clientCase{kind: "delex", storesToken: true, key: same, ttlAfterExtend: "px"}, ConfigFor(topo), raw)
}
