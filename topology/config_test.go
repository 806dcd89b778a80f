package topology

import (
	"archive/tar"
	"bytes"
	"encoding/base64"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	tc "github.com/testcontainers/testcontainers-go"
)

func TestServerConfig(t *testing.T) {
	o := Options{}.withDefaults()
	conf := serverConfig(Replicated, "10.213.7.10:6379", o)
	for _, want := range []string{"port 6379\n", "replicaof 10.213.7.10 6379\n", `save ""`, "protected-mode no"} {
		if !strings.Contains(conf, want) {
			t.Errorf("replica config lacks %q:\n%s", want, conf)
		}
	}
	if strings.Contains(conf, "cluster-enabled") || strings.Contains(conf, "appendonly") {
		t.Errorf("replica config has cluster or AOF lines:\n%s", conf)
	}
	o.AOF = true
	o.NodeTimeout = 1500 * time.Millisecond
	conf = serverConfig(Cluster, "", o)
	for _, want := range []string{"cluster-enabled yes", "cluster-node-timeout 1500", "appendonly yes", "appendfsync always", "cluster-config-file /data/nodes.conf"} {
		if !strings.Contains(conf, want) {
			t.Errorf("cluster config lacks %q:\n%s", want, conf)
		}
	}
	if strings.Contains(conf, "replicaof") {
		t.Errorf("cluster config has replicaof")
	}
}

func TestSentinelConfig(t *testing.T) {
	o := Options{DownAfter: 800 * time.Millisecond}.withDefaults()
	id := sentinelID("run1", 0)
	if len(id) != 40 || id == sentinelID("run1", 1) {
		t.Errorf("sentinel ids %q and %q: want 40 hex characters, one per sentinel", id, sentinelID("run1", 1))
	}
	conf := sentinelConfig("10.213.7.10:6379", id, []string{"10.213.7.11:6379"}, map[string]string{"10.213.7.14:26379": "ab12"}, o)
	for _, want := range []string{
		"sentinel myid " + id + "\n",
		"sentinel known-replica mymaster 10.213.7.11 6379\n",
		"sentinel known-sentinel mymaster 10.213.7.14 26379 ab12\n",
		"sentinel monitor mymaster 10.213.7.10 6379 2\n",
		"sentinel down-after-milliseconds mymaster 60000\n", // until the sentinels agree
		"sentinel failover-timeout mymaster 3000\n",
		"port 26379\n",
	} {
		if !strings.Contains(conf, want) {
			t.Errorf("sentinel config lacks %q:\n%s", want, conf)
		}
	}
}

func TestLaunchScript(t *testing.T) {
	v, _ := Lookup("valkey-9.1")
	s := launchScript(v, false, "")
	if !strings.HasSuffix(s, "; exec valkey-server /data/node.conf") {
		t.Errorf("server launch script: %s", s)
	}
	if !strings.Contains(s, "rm -rf /data/dump.rdb /data/appendonlydir") || strings.Contains(s, "nodes.conf") {
		t.Errorf("wipe must drop data files and keep nodes.conf: %s", s)
	}
	// The files are unpacked on the first start only, before the wipe and
	// the server, and the variable does not reach the server.
	unpack := strings.Index(s, "base64 -d | tar -x -C /")
	if unpack < 0 || !strings.Contains(s, "[ ! -e "+filesMarker+" ]") || unpack > strings.Index(s, "rm -rf") || !strings.Contains(s, "unset "+filesEnv+";") {
		t.Errorf("files must be unpacked once, first: %s", s)
	}
	r, _ := Lookup("redis-7.0")
	if s := launchScript(r, true, shimPath); !strings.HasSuffix(s, "; exec env LD_PRELOAD="+shimPath+" redis-server /data/node.conf --sentinel") || strings.Count(s, "LD_PRELOAD") != 1 {
		t.Errorf("sentinel launch script, the shim preloaded for the server alone: %s", s)
	}
}

// TestFilesThroughEnv: a node's usual files go through its environment as
// one archive holding them and the marker; a large one is copied instead.
func TestFilesThroughEnv(t *testing.T) {
	topo := &Topology{}
	env := requestEnv(t, topo, []nodeFile{{path: confPath, mode: 0o644, data: []byte("port 6379\n")}, {path: clockFile, mode: 0o644, data: []byte("0\n")}})
	raw, err := base64.StdEncoding.DecodeString(env[filesEnv])
	if err != nil {
		t.Fatalf("%s is not base64: %v", filesEnv, err)
	}
	got := map[string]string{}
	tr := tar.NewReader(bytes.NewReader(raw))
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(tr)
		got["/"+h.Name] = string(b)
	}
	for _, p := range []string{confPath, clockFile, filesMarker} {
		if _, ok := got[p]; !ok {
			t.Errorf("archive lacks %s: %v", p, got)
		}
	}
	if got[confPath] != "port 6379\n" {
		t.Errorf("configuration %q", got[confPath])
	}
	if big := requestEnv(t, topo, []nodeFile{{path: "/data/dump.rdb", mode: 0o644, data: make([]byte, maxFilesEnv)}}); big[filesEnv] != "" {
		t.Errorf("a %d-byte file went through the environment", maxFilesEnv)
	}
}

// requestEnv is the environment withFiles gives a container request.
func requestEnv(t *testing.T, topo *Topology, files []nodeFile) map[string]string {
	t.Helper()
	opt, err := topo.withFiles(files)
	if err != nil {
		t.Fatal(err)
	}
	var req tc.GenericContainerRequest
	if err := opt(&req); err != nil {
		t.Fatal(err)
	}
	return req.Env
}

func TestPartitionScript(t *testing.T) {
	s := partitionScript([]string{"10.0.0.11", "10.0.0.12"})
	for _, want := range []string{"iptables -N LOCKCHECK", "-I INPUT -j LOCKCHECK", "-I OUTPUT -j LOCKCHECK",
		"-A LOCKCHECK -s 10.0.0.11 -j DROP", "-A LOCKCHECK -d 10.0.0.12 -j DROP"} {
		if !strings.Contains(s, want) {
			t.Errorf("partition script lacks %q: %s", want, s)
		}
	}
}

func TestSlotRangesCoverEverySlotOnce(t *testing.T) {
	r := SlotRanges(3)
	if r[0] != [2]int{0, 5460} || r[1] != [2]int{5461, 10922} || r[2] != [2]int{10923, 16383} {
		t.Fatalf("SlotRanges(3) = %v", r)
	}
	for n := 1; n <= 7; n++ {
		next := 0
		for _, rr := range SlotRanges(n) {
			if rr[0] != next || rr[1] < rr[0] {
				t.Fatalf("SlotRanges(%d) = %v: gap or overlap at %d", n, SlotRanges(n), next)
			}
			next = rr[1] + 1
		}
		if next != Slots {
			t.Fatalf("SlotRanges(%d) ends at %d", n, next)
		}
	}
}

func TestKeySlot(t *testing.T) {
	// Reference values from CLUSTER KEYSLOT.
	cases := map[string]int{"foo": 12182, "bar": 5061, "{user1000}.following": 3443, "{user1000}.followers": 3443, "foo{}{bar}": 8363, "foo{{bar}}zap": 4015}
	for k, want := range cases {
		if got := KeySlot(k); got != want {
			t.Errorf("KeySlot(%q) = %d, want %d", k, got, want)
		}
	}
	if KeySlot("lock:{job}") != KeySlot("fence:{job}") {
		t.Error("lock and fence keys with one hash tag must share a slot")
	}
}

func TestParseClusterNodes(t *testing.T) {
	s := `07c37dfeb235213a872192d90877d0cd55635b91 10.0.0.13:6379@16379 slave e7d1eecce10fd6bb5eb35b9f99a514335d9ba9ca 0 1426238317239 4 connected
67ed2db8d677e59ec4a4cefb06858cf2a1a89fa1 10.0.0.11:6379@16379 master - 0 1426238316232 2 connected 5461-10922
e7d1eecce10fd6bb5eb35b9f99a514335d9ba9ca 10.0.0.10:6379@16379 myself,master - 0 0 1 connected 0-5460 [5461->-67ed2db8d677e59ec4a4cefb06858cf2a1a89fa1]
`
	nodes := parseClusterNodes(s)
	if len(nodes) != 3 {
		t.Fatalf("parsed %d nodes", len(nodes))
	}
	if nodes[0].primary || nodes[0].addr != "10.0.0.13:6379" {
		t.Errorf("replica parsed as %+v", nodes[0])
	}
	if !nodes[1].primary || nodes[1].slots != 5462 || nodes[2].slots != 5461 {
		t.Errorf("slots: %+v %+v", nodes[1], nodes[2])
	}
	// cluster-replica-no-failover flags every node nofailover: no failure
	s = `67ed2db8d677e59ec4a4cefb06858cf2a1a89fa1 10.0.0.11:6379@16379 master,nofailover - 0 1426238316232 2 connected 5461-10922
e7d1eecce10fd6bb5eb35b9f99a514335d9ba9ca 10.0.0.10:6379@16379 master,fail? - 0 0 1 connected 0-5460
07c37dfeb235213a872192d90877d0cd55635b91 10.0.0.13:6379@16379 slave,fail e7d1eecce10fd6bb5eb35b9f99a514335d9ba9ca 0 1426238317239 4 connected
`
	nodes = parseClusterNodes(s)
	if !nodes[0].primary || nodes[0].failed || !nodes[1].failed || !nodes[2].failed || nodes[2].primary {
		t.Errorf("flags parsed as %+v", nodes)
	}
}

func TestTarOf(t *testing.T) {
	b, err := tarOf([]nodeFile{{path: "/data/node.conf", mode: 0o644, data: []byte("port 6379\n")}, {path: "/usr/lib/lockcheck/x.so", mode: 0o755, data: []byte{1, 2}}})
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(b)
	var names []string
	for {
		h, err := tr.Next()
		if err != nil {
			break
		}
		names = append(names, fmt.Sprintf("%s %o", h.Name, h.Mode))
	}
	want := []string{"data/ 755", "usr/ 755", "usr/lib/ 755", "usr/lib/lockcheck/ 755", "data/node.conf 644", "usr/lib/lockcheck/x.so 755"}
	if strings.Join(names, ",") != strings.Join(want, ",") {
		t.Errorf("archive holds %v, want %v", names, want)
	}
}
