package locktest

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/lockcheck/lockcheck/harness"
	"github.com/lockcheck/lockcheck/scenarios/fault"
	"github.com/lockcheck/lockcheck/topology"
)

// Env holds the Docker engine and the topologies its runs started, and
// tears them down when the test that made it ends.
type Env struct {
	eng *topology.Engine
	// unwatch stops removing this Env's runs on Ctrl-C (they are gone).
	unwatch func()
	// missing says why no run can happen here (no Docker engine).
	missing string

	mu    sync.Mutex
	topos map[string]*shared
}

// shared is one started topology; one run uses it at a time.
type shared struct {
	sync.Mutex
	t *topology.Topology
}

// New connects to the Docker engine for t and its subtests; everything
// its runs start is removed when t ends.
func New(t testing.TB) *Env {
	t.Helper()
	e := &Env{topos: map[string]*shared{}}
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	eng, err := topology.Connect(ctx, nil)
	if err != nil {
		e.missing = err.Error()
		return e
	}
	e.eng = eng
	e.unwatch = eng.RemoveOnInterrupt()
	t.Cleanup(func() { e.close(t) })
	return e
}

func (e *Env) close(t testing.TB) {
	e.mu.Lock()
	defer e.mu.Unlock()
	for key, s := range e.topos {
		// A topology that did not start left nothing to remove.
		if s.t != nil {
			if err := harness.Teardown(context.Background(), s.t); err != nil {
				t.Errorf("locktest: %v", err)
			}
		}
		delete(e.topos, key)
	}
	e.unwatch()
	e.eng.Close()
}

// topology returns a started topology for s, reset if an earlier run used
// it, held for this run until release.
func (e *Env) topology(t testing.TB, s Scenario) (_ *topology.Topology, release func()) {
	t.Helper()
	if e.missing != "" {
		unavailable(t, e.missing)
	}
	key := topologyKey(s)
	e.mu.Lock()
	sh := e.topos[key]
	if sh == nil {
		sh = &shared{}
		e.topos[key] = sh
	}
	e.mu.Unlock()
	sh.Lock()
	if sh.t == nil {
		for _, name := range append([]string{s.Server}, nodeBuilds(s)...) {
			b, err := topology.Sources{}.Lookup(name)
			if err != nil {
				sh.Unlock()
				t.Fatalf("locktest: %v", err)
			}
			if img := e.eng.Resolve(t.Context(), b, topology.Sources{}); img.Status == topology.Unavailable {
				sh.Unlock()
				unavailable(t, fmt.Sprintf("%s is unavailable: %s; fix: %s", name, img.Reason, img.Fix))
			}
		}
		topo, err := harness.StartScenario(t.Context(), e.eng, s, topology.Sources{}, logWriter{t})
		if err != nil {
			sh.Unlock()
			t.Fatalf("locktest: %s %s did not start: %v", s.Server, s.Topology, err)
		}
		sh.t = topo
	} else if err := reset(t.Context(), sh.t); err != nil {
		sh.Unlock()
		t.Fatalf("locktest: reset %s %s for the next run: %v", s.Server, s.Topology, err)
	}
	return sh.t, sh.Unlock
}

// topologyKey tells topologies apart by what a run can see of them.
func topologyKey(s Scenario) string {
	b, _ := json.Marshal(struct {
		Server, Topology string
		AOF              bool
		Proxied          bool
		NodeBuilds       map[string]string
		NodeConfig       map[string][]string
	}{s.Server, string(s.Topology), s.AOF, fault.NeedsClientProxy(s.Faults), s.NodeBuilds, s.NodeConfig})
	return string(b)
}

func nodeBuilds(s Scenario) []string {
	var out []string
	for _, b := range s.NodeBuilds {
		out = append(out, b)
	}
	return out
}

// reset empties every primary (replicas follow) so that a run starts from
// no keys, as on a new topology.
func reset(ctx context.Context, t *topology.Topology) error {
	for _, n := range t.Servers() {
		if role, err := n.Role(ctx); err != nil || role != topology.RolePrimary {
			continue
		}
		if _, err := n.Do(ctx, "FLUSHALL"); err != nil {
			return fmt.Errorf("flush %s: %w", n.Name, err)
		}
	}
	return nil
}

// unavailable skips t with why, or fails it where LOCKTEST_REQUIRE is set.
func unavailable(t testing.TB, why string) {
	t.Helper()
	if os.Getenv("LOCKTEST_REQUIRE") != "" {
		t.Fatalf("locktest: %s (LOCKTEST_REQUIRE is set, so this is not skipped)", why)
	}
	t.Skipf("locktest: %s (set LOCKTEST_REQUIRE to fail instead)", why)
}
