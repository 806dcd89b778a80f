package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lockcheck/lockcheck/checker"
	"github.com/lockcheck/lockcheck/history"
	"github.com/lockcheck/lockcheck/history/jepsen"
)

// mutexEDN is a correct mutex history: process 0 holds, releases, then
// process 1 (which waited) holds, under a partition.
const mutexEDN = `{:type :invoke, :f :acquire, :value nil, :process 0, :time 1000000, :index 0}
{:type :ok, :f :acquire, :value nil, :process 0, :time 2000000, :index 1}
{:type :invoke, :f :acquire, :value nil, :process 1, :time 2500000, :index 2}
{:type :info, :f :start-partition, :value nil, :process :nemesis, :time 2600000, :index 3}
{:type :info, :f :start-partition, :value [:isolated {"n1" #{"n2"}}], :process :nemesis, :time 2700000, :index 4}
{:type :invoke, :f :release, :value nil, :process 0, :time 3000000, :index 5}
{:type :ok, :f :release, :value nil, :process 0, :time 4000000, :index 6}
{:type :ok, :f :acquire, :value nil, :process 1, :time 5000000, :index 7}
{:type :info, :f :stop-partition, :value nil, :process :nemesis, :time 5500000, :index 8}
{:type :info, :f :stop-partition, :value :network-healed, :process :nemesis, :time 5600000, :index 9}
{:type :invoke, :f :release, :value nil, :process 1, :time 6000000, :index 10}
{:type :ok, :f :release, :value nil, :process 1, :time 7000000, :index 11}
`

// checkEDN imports edn with a lease longer than the test and checks it
// with the options lockcheck check gives it.
func checkEDN(t *testing.T, edn string, ttl time.Duration) *checker.Result {
	t.Helper()
	h, err := jepsen.Import(strings.NewReader(edn), jepsen.Options{TTL: ttl})
	if err != nil {
		t.Fatal(err)
	}
	res, err := checker.Run(context.Background(), h, checker.OptionsFor(h))
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func TestJepsenMutexSafe(t *testing.T) {
	if res := checkEDN(t, mutexEDN, 24*time.Hour); res.Verdict != checker.Safe {
		t.Fatalf("verdict %s: %s", res.Verdict, res.Summary)
	}
}

// TestJepsenDoubleHolder: two processes told :ok for an acquire with no
// release between them.
func TestJepsenDoubleHolder(t *testing.T) {
	edn := `{:type :invoke, :f :lock, :process 0, :time 1000000}
{:type :ok, :f :lock, :process 0, :time 2000000}
{:type :invoke, :f :lock, :process 1, :time 3000000}
{:type :ok, :f :lock, :process 1, :time 4000000}
{:type :invoke, :f :unlock, :process 0, :time 5000000}
{:type :ok, :f :unlock, :process 0, :time 6000000}
`
	res := checkEDN(t, edn, 24*time.Hour)
	c, _ := res.Checks.Find(checker.DoubleHolder)
	if res.Verdict != checker.Violated || c.Count == 0 {
		t.Fatalf("verdict %s, double holders %d: %s", res.Verdict, c.Count, res.Summary)
	}
}

// TestJepsenInfoIsUnknown: an :info acquire may have taken the lock, so a
// later acquire by another process is no double holder (the :info one
// never said it held) and the history is linearizable.
func TestJepsenInfoIsUnknown(t *testing.T) {
	edn := `{:type :invoke, :f :acquire, :process 0, :time 1000000}
{:type :info, :f :acquire, :process 0, :time 2000000, :error :timeout}
{:type :invoke, :f :acquire, :process 1, :time 3000000}
{:type :fail, :f :acquire, :process 1, :time 4000000}
`
	h, _ := jepsen.Import(strings.NewReader(edn), jepsen.Options{TTL: time.Hour})
	if h.Ops[0].Outcome != history.Unknown || h.Ops[1].Outcome != history.Fail {
		t.Fatalf("outcomes %s, %s", h.Ops[0].Outcome, h.Ops[1].Outcome)
	}
	if res := checkEDN(t, edn, time.Hour); res.Verdict != checker.Safe {
		t.Fatalf("verdict %s: %s", res.Verdict, res.Summary)
	}
}

// TestJepsenNeedsTTL is why import requires --ttl: the checker reads an
// acquire with no TTL as one that set no expiry, a ttl finding, so a
// correct mutex imported without a lease would be violated.
func TestJepsenNeedsTTL(t *testing.T) {
	h, err := jepsen.Import(strings.NewReader(mutexEDN), jepsen.Options{TTL: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	for i := range h.Ops {
		h.Ops[i].TTLms = 0
	}
	res, err := checker.Run(context.Background(), h, checker.OptionsFor(h))
	if err != nil {
		t.Fatal(err)
	}
	if c, _ := res.Checks.Find(checker.TTL); c.Status == checker.Pass {
		t.Fatalf("ttl check passed with no leases: import may no longer need --ttl")
	}
}

// TestImportCommand: import writes a folder lockcheck check reads; bad
// input is one line naming the file, line and column, exit code 2.
func TestImportCommand(t *testing.T) {
	dir := t.TempDir()
	good, bad := filepath.Join(dir, "history.edn"), filepath.Join(dir, "bad.edn")
	if err := os.WriteFile(good, []byte(mutexEDN), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bad, []byte(mutexEDN+"{:type :ok, :f :acquire, :process 2 :time}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	var stdout, stderr bytes.Buffer
	if code := run([]string{"import", "jepsen", "--ttl", "24h", good, out}, &stdout, &stderr); code != 0 {
		t.Fatalf("import: exit %d: %s", code, stderr.String())
	}
	if code := run([]string{"check", out}, &stdout, &stderr); code != 0 {
		t.Fatalf("check: exit %d: %s", code, stderr.String())
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"import", "jepsen", good, out}, "--ttl is required"},
		{[]string{"import", "etcd", good, out}, `unknown format "etcd"`},
		{[]string{"import", "jepsen", "--ttl", "1s", good}, "a format, a file and a folder"},
		{[]string{"import", "jepsen", "--ttl", "1s", bad, filepath.Join(dir, "new")}, bad + ":13:37: map key :time has no value"},
		{[]string{"import", "jepsen", "--ttl", "1s", filepath.Join(dir, "none.edn"), filepath.Join(dir, "new")}, "none.edn does not exist"},
		{[]string{"import", "jepsen", "--ttl", "1s", good, out}, "holds a run (history.json): give a new folder, or --force"},
	} {
		stderr.Reset()
		code := run(c.args, &stdout, &stderr)
		msg := strings.TrimSpace(stderr.String())
		if code != usageExit || strings.Contains(msg, "\n") || !strings.Contains(msg, c.want) {
			t.Errorf("lockcheck %s: exit %d, stderr %q; want exit 2 and one line with %q", strings.Join(c.args, " "), code, msg, c.want)
		}
	}
}
