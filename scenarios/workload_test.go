package scenarios

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lockcheck/lockcheck/history"
	"github.com/lockcheck/lockcheck/scenarios/lockclient"
	"github.com/lockcheck/lockcheck/topology"
)

// allKinds is every built-in kind plus the example Python adapter.
func allKinds(t *testing.T) []string { return append(lockclient.Kinds(), pythonAdapter(t)) }

func kindLabel(kind string) string {
	if strings.HasPrefix(kind, lockclient.ExternalPrefix) {
		return "external-python"
	}
	return kind
}

// runFor runs a small workload of kind for d and checks the history's
// shape; a refusal comes back as the error.
func runFor(t *testing.T, topo *topology.Topology, kind string, d time.Duration) (*history.History, Stats, error) {
	t.Helper()
	var last Stats
	cfg := lockclient.ConfigFor(topo)
	cfg.StderrDir = t.TempDir()
	// A healthy server answers in milliseconds: a call that times out here
	// would be the machine's load, not the client's, so the budget is long.
	w := Workload{Scenario: adversarial(Scenario{ClientSettings: ClientSettings{Client: kind, CallTimeout: 10 * time.Second}, TrafficSettings: TrafficSettings{Clients: 3, Keys: 2, TTL: 300 * time.Millisecond, Duration: d, Seed: 1}}).WithDefaults(),
		Log:      slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelError})),
		Progress: func(s Stats) { last = s }}
	h, err := w.Run(context.Background(), cfg)
	if err != nil {
		return nil, last, err
	}
	checkHistory(t, h, topo, kind)
	return h, last, nil
}

// checkHistory checks what every run's history must show.
func checkHistory(t *testing.T, h *history.History, topo *topology.Topology, kind string) {
	t.Helper()
	m := h.Meta
	if m.Server != topo.Build.Name || m.Version != topo.Version || m.Topology != string(topo.Kind) || m.Client == "" ||
		m.Seed != 1 || m.TTLms != 300 || m.Clients != 3 || m.Keys != 2 || m.DurationNs <= 0 || m.Started == "" {
		t.Fatalf("meta %+v", m)
	}
	if strings.HasPrefix(kind, lockclient.ExternalPrefix) != strings.HasPrefix(m.Client, lockclient.ExternalPrefix) {
		t.Fatalf("meta client %q for kind %q", m.Client, kind)
	}
	count := map[history.Kind]map[history.Outcome]int{}
	unknownIDs := map[int]bool{}
	for _, op := range h.Ops {
		harness := op.Kind == history.Observe && op.Worker == -1 // the observer's reads
		if op.Return < op.Call || (op.Worker < 0 && !harness) || op.Worker >= 3 || op.Key == "" {
			t.Fatalf("bad op %+v", op)
		}
		if count[op.Kind] == nil {
			count[op.Kind] = map[history.Outcome]int{}
		}
		count[op.Kind][op.Outcome]++
		if op.Kind == history.Acquire && op.Outcome == history.OK && op.Token == "" {
			t.Fatalf("ok acquire without a token: %+v", op)
		}
		if op.Kind != history.Write && op.Outcome == history.Unknown {
			unknownIDs[op.Client] = true
		} else if unknownIDs[op.Client] && op.Kind != history.Write {
			// Ops are sorted by call; a later op of the same id would
			// mean the id was reused after an Unknown.
			t.Fatalf("client id %d used after an unknown outcome: %+v", op.Client, op)
		}
	}
	if count[history.Acquire][history.OK] == 0 || count[history.Write][history.OK] == 0 || count[history.Release][history.OK] == 0 {
		t.Fatalf("a run without acquires, writes or releases: %v", count)
	}
	if lockclient.Observable(kind) && count[history.Observe][history.OK] < count[history.Acquire][history.OK] {
		t.Fatalf("%d observations for %d acquires: every OK acquire is observed", count[history.Observe][history.OK], count[history.Acquire][history.OK])
	}
	// The built-in clients' calls have a 10 s budget here, so their
	// unknowns are the workload's late replies; a library bounds its
	// calls itself (redsync: 5% of the TTL per node, 15 ms here), and a
	// loaded machine times those out: their count is the machine's.
	if tr, _ := lockclient.TraitsOf(kind); !tr.Library {
		if n := len(unknownIDs); n > len(h.Ops)/10 {
			t.Fatalf("%d unknown outcomes on a healthy server: %v", n, count)
		}
	}
	t.Logf("%s: %d ops %v", m.Client, len(h.Ops), count)
	for _, op := range h.Ops {
		if op.Outcome == history.Unknown || (op.Outcome == history.Fail && op.Error != "") {
			t.Logf("  %s %s: %s", op.Kind, op.Outcome, op.Error)
		}
	}
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}

// TestWorkloadEveryClient runs every client for about two seconds on
// valkey-9.1 and checks each history survives JSON exactly.
func TestWorkloadEveryClient(t *testing.T) {
	topo := sharedStandalone(t, "valkey-9.1")
	raw := direct(t, topo)
	for _, kind := range allKinds(t) {
		t.Run(kindLabel(kind), func(t *testing.T) {
			flushAll(t, raw)
			h, stats, err := runFor(t, topo, kind, 2*time.Second)
			if kind == "delex" {
				if !errors.Is(err, lockclient.ErrUnsupported) {
					t.Fatalf("delex on valkey-9.1: %v, want a refusal", err)
				}
				t.Log(err)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			t.Log(stats)
			roundTrip(t, h)
		})
	}
}

// TestWorkloadWaitRelease: a standalone server has no replica, so WAIT 1
// always falls short; under WaitRelease every acquire gives the lock back,
// and the history shows each as an acquire and its release.
func TestWorkloadWaitRelease(t *testing.T) {
	topo := sharedStandalone(t, "valkey-9.1")
	cfg := lockclient.ConfigFor(topo)
	var stats Stats
	w := Workload{Scenario: adversarial(Scenario{
		ClientSettings:  ClientSettings{Client: "fenced", Wait: lockclient.WaitOptions{Replicas: 1, Timeout: 20 * time.Millisecond, OnShort: lockclient.WaitRelease}},
		TrafficSettings: TrafficSettings{Clients: 2, Keys: 1, TTL: 300 * time.Millisecond, Duration: 2 * time.Second, Seed: 3},
	}).WithDefaults(),
		Progress: func(s Stats) { stats = s }}
	h, err := w.Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	// Each undone acquire is an ok acquire whose return is its release's
	// call, on the same client id.
	var acquires int
	open := map[string]history.Op{}
	for _, op := range h.Ops {
		switch {
		case op.Kind == history.Acquire && op.Outcome == history.OK:
			acquires++
			if !op.HasFence {
				t.Fatalf("undone fenced acquire lost its fence: %+v", op)
			}
			open[op.Token] = op
		case op.Kind == history.Release:
			acq, ok := open[op.Token]
			if !ok || acq.Return != op.Call || acq.Client != op.Client {
				t.Fatalf("release %+v does not follow its acquire %+v", op, acq)
			}
			delete(open, op.Token)
		case op.Kind == history.Write, op.Kind == history.Extend:
			t.Fatalf("a worker worked without a replicated lock: %+v", op)
		}
	}
	if acquires == 0 || len(open) > 0 || stats.Client["short_waits"] != int64(acquires) {
		t.Fatalf("%d acquires, %d without a release, stats %v", acquires, len(open), stats)
	}
	roundTrip(t, h)

	// WaitGoOn keeps the lock and counts the short WAIT; WAITAOF too.
	for _, wo := range []lockclient.WaitOptions{
		{Replicas: 1, Timeout: 20 * time.Millisecond, OnShort: lockclient.WaitGoOn},
		{AOF: true, Local: 0, Replicas: 1, Timeout: 20 * time.Millisecond, OnShort: lockclient.WaitGoOn},
	} {
		c := cfg
		c.Wait = wo
		cl := newTestClient(t, "native", c)
		r := cl.Acquire(context.Background(), "lock:{w1}", time.Second)
		if r.Outcome != history.OK || r.Undo != nil || cl.(counted).Counts()["short_waits"] != 1 {
			t.Fatalf("%s go-on: %+v, counts %v", wo, r, cl.(counted).Counts())
		}
		cl.Release(context.Background(), "lock:{w1}", r.Token)
	}
	cfg.Wait = w.Wait
	if _, err := lockclient.NewClient("redsync", cfg); err == nil {
		t.Fatal("a library adapter accepted WAIT options it cannot honour")
	}
}

// TestEveryClientEveryBuild runs every client for 10 s on every build
// (LOCKCHECK_LONG=1), keeping the histories in LOCKCHECK_OUT (or a
// temporary folder). A build that lacks a client's commands is reported in
// one line, not run.
func TestEveryClientEveryBuild(t *testing.T) {
	if !longTests() {
		t.Skip("set LOCKCHECK_LONG=1 for the 10 s run of every client on every build")
	}
	out := os.Getenv("LOCKCHECK_OUT")
	if out == "" {
		out = t.TempDir()
	}
	for _, build := range []string{"valkey-8.0", "valkey-8.1", "valkey-9.1", "redis-7.0", "redis-8.6"} {
		t.Run(build, func(t *testing.T) {
			topo := startStandalone(t, build)
			raw := direct(t, topo)
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			caps, err := lockclient.Probe(ctx, topo.ClientOption())
			cancel()
			if err != nil {
				t.Fatal(err)
			}
			kinds := lockclient.Kinds()
			// The adapter reports errors per call rather than refusing; give
			// it the mode the build can serve.
			if caps[lockclient.CapIFEQ] && caps[lockclient.CapDELIFEQ] {
				kinds = append(kinds, pythonAdapter(t))
			} else {
				kinds = append(kinds, pythonAdapter(t, "--mode", "lua"))
			}
			for _, kind := range kinds {
				t.Run(kindLabel(kind), func(t *testing.T) {
					flushAll(t, raw)
					h, stats, err := runFor(t, topo, kind, 10*time.Second)
					if errors.Is(err, lockclient.ErrUnsupported) {
						t.Logf("refused: %v", err)
						return
					}
					if err != nil {
						t.Fatal(err)
					}
					t.Log(stats)
					path := filepath.Join(out, fmt.Sprintf("%s-%s.json", build, kindLabel(kind)))
					if err := h.Save(path); err != nil {
						t.Fatal(err)
					}
				})
			}
		})
	}
}

// TestRefusalOnValkey80 is the one line a run prints instead of crashing
// when the build lacks what the client needs.
func TestRefusalOnValkey80(t *testing.T) {
	topo := startStandalone(t, "valkey-8.0")
	w := Workload{Scenario: Scenario{ClientSettings: ClientSettings{Client: "native"}, TrafficSettings: TrafficSettings{Duration: time.Second, TTL: 300 * time.Millisecond}}.WithDefaults()}
	h, err := w.Run(context.Background(), lockclient.ConfigFor(topo))
	if !errors.Is(err, lockclient.ErrUnsupported) {
		t.Fatalf("native on valkey-8.0: history %v, error %v; want a refusal", h != nil, err)
	}
	want := "client native needs SET IFEQ (Valkey 8.1+, Redis 8.4+) and DELIFEQ (Valkey 9.0+); valkey-8.0 (" + topo.Version + ") has neither"
	if err.Error() != want {
		t.Fatalf("refusal %q, want %q", err, want)
	}
	t.Log(err)
}
