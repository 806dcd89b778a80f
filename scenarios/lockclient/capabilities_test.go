package lockclient

import (
	"context"
	"testing"
	"time"
)

// TestProbeBuilds observes each build's lock commands, as
// valkey-semantics.md lists them. The servers are the package's shared ones
// (valkey-9.1 with most tests here, redis-8.6 with TestDelexOnRedis86).
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
			topo := sharedStandalone(t, build)
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
				if err := caps.Refusal(kind, build, topo.Version); err != nil {
					t.Logf("refused: %v", err)
				}
			}
		})
	}
}

// TestDelexOnRedis86 runs the delex client's commands where DELEX exists.
func TestDelexOnRedis86(t *testing.T) {
	topo := sharedStandalone(t, "redis-8.6")
	raw := direct(t, topo)
	same := func(n string) string { return n }
	testClientContract(t, clientCase{kind: "delex", storesToken: true, key: same, ttlAfterExtend: "px"}, ConfigFor(topo), raw)
}

func TestFenceKey(t *testing.T) {
	for in, want := range map[string]string{
		"lock:{k1}":     "fence:{k1}",
		"lock:{a}:b{c}": "fence:{a}",
		"plain":         "fence:{plain}",
		"odd:{}x":       "fence:{odd:{}x}",
	} {
		if got := fenceKey(in); got != want {
			t.Errorf("fenceKey(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestUnsupportedLine(t *testing.T) {
	caps := Capabilities{CapIFEQ: true, CapLua: true}
	err := caps.Refusal("native", "valkey-8.1", "8.1.1")
	want := "client native needs DELIFEQ (Valkey 9.0+); valkey-8.1 (8.1.1) does not have it"
	if err == nil || err.Error() != want {
		t.Fatalf("got %v, want %q", err, want)
	}
	if caps.Refusal("lua", "valkey-8.1", "8.1.1") != nil {
		t.Fatal("lua refused on a server with Lua")
	}
}
