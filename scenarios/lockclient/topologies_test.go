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

// TestClientsOnTopologies runs the clients' commands on Sentinel and
// cluster topologies of valkey-9.1, where servers announce container
// addresses: the Go clients follow them through the topology's dialer, the
// Python adapter through addr_map. With replicas present, WAIT 1 after an
// acquire is acknowledged, on the connection that sent the acquire.
func TestClientsOnTopologies(t *testing.T) {
	py := pythonAdapter(t)
	same := func(n string) string { return n }
	for _, tk := range []topology.Kind{topology.Sentinel, topology.Cluster} {
		t.Run(string(tk), func(t *testing.T) {
			topo := startTopology(t, "valkey-9.1", tk)
			raw := direct(t, topo)
			cfg := ConfigFor(topo)
			cfg.Timeout = 2 * time.Second
			cfg.StderrDir = t.TempDir()
			cases := []clientCase{
				{kind: "native", storesToken: true, key: same, ttlAfterExtend: "px"},
				{kind: "fenced", storesToken: true, key: same, ttlAfterExtend: "px"},
				{kind: "lua", storesToken: true, key: same, ttlAfterExtend: "px"},
				{kind: "redsync", storesToken: true, key: same, ttlAfterExtend: "px"},
				{kind: "redislock", storesToken: true, key: same, ttlAfterExtend: "px"},
				{kind: "valkeylock", key: func(n string) string { return "valkeylock:0:" + n }, ttlAfterExtend: "px", extendIsLocal: true},
				{kind: py, storesToken: true, key: same, ttlAfterExtend: "px"},
			}
			if tk == topology.Cluster {
				cases = append(cases, clientCase{kind: "glide", storesToken: true, key: same, ttlAfterExtend: "px"})
			}
			for _, cc := range cases {
				t.Run(kindLabel(cc.kind), func(t *testing.T) { testClientContract(t, cc, cfg, raw) })
			}
			if tk == topology.Cluster {
				t.Run("python late reply", func(t *testing.T) { testPythonLateReplyOnCluster(t, cfg, raw) })
			}
			if tk == topology.Sentinel {
				t.Run("glide refused", func(t *testing.T) {
					c, err := NewClient("glide", cfg)
					if err == nil {
						c.Close()
						t.Fatal("GLIDE's Go client has no Sentinel mode, yet a client was built for Sentinel")
					}
					if !strings.Contains(err.Error(), "no Sentinel mode") {
						t.Fatalf("the refusal does not say why: %v", err)
					}
				})
			}
			t.Run("fenced-wait", func(t *testing.T) {
				c := cfg
				// A replica acknowledges at once; the long timeout only keeps a
				// loaded machine from reading a late ack as a short WAIT.
				c.Wait = WaitOptions{Replicas: 1, Timeout: 10 * time.Second, OnShort: WaitRelease}
				c.Timeout = 15 * time.Second
				cl := newTestClient(t, "fenced", c)
				for _, key := range []string{"lock:{w1}", "lock:{w2}", "lock:{w3}"} {
					r := cl.Acquire(context.Background(), key, time.Second)
					if r.Outcome != history.OK || !r.HasFence || r.Undo != nil {
						t.Fatalf("acquire %s with WAIT 1 and replicas: %+v", key, r)
					}
				}
			})
			t.Run("addr_map used", func(t *testing.T) {
				// Clients may dial the announced container addresses
				// themselves (a local engine): map every node to its port
				// on the host instead, which also reaches it, and see the
				// adapter follow the map.
				c := cfg
				c.StderrDir = t.TempDir() // this adapter's lines only
				c.AddrMap = map[string]string{}
				for _, n := range topo.Nodes {
					c.AddrMap[n.Internal()] = n.Addr()
				}
				cl := newTestClient(t, py, c)
				if r := cl.Acquire(context.Background(), "lock:{m9}", time.Second); r.Outcome != history.OK {
					t.Fatalf("acquire: %+v", r)
				}
				// Every connection to an announced address went through the
				// map to a host port, never to the container network.
				log, err := os.ReadFile(cl.(*external).StderrPath())
				if err != nil {
					t.Fatal(err)
				}
				if !strings.Contains(string(log), "connect 127.0.0.1:") || strings.Contains(string(log), "connect 10.") {
					t.Fatalf("the adapter did not follow addr_map:\n%s", log)
				}
			})
		})
	}
}
