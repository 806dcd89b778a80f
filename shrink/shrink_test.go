package shrink

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/lockcheck/lockcheck/harness"
	"github.com/lockcheck/lockcheck/history"
	"github.com/lockcheck/lockcheck/internal/testengine"
	"github.com/lockcheck/lockcheck/reports"
	"github.com/lockcheck/lockcheck/scenarios"
	"github.com/lockcheck/lockcheck/scenarios/lockclient"
	"github.com/lockcheck/lockcheck/topology"
)

// TestRun shrinks a run of a client that reports every acquire as
// held, on a real server: the double holder needs two clients' acquires
// and nothing else, so the shrink must end with a script of those two
// steps (trace.json), at least 5 times fewer operations, confirmed in
// every replay, and a run folder that holds the reproducer and its
// shrink.json.
func TestRun(t *testing.T) {
	unregister, err := lockclient.Register("test-always-acquires-shrink", lockclient.Traits{}, func(cfg lockclient.Config) (lockclient.Client, error) {
		c, err := lockclient.NewClient("native", cfg)
		return alwaysAcquires{c}, err
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(unregister)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if _, err := topology.Lookup("valkey-9.1"); err != nil {
		t.Fatal(err)
	}
	from := filepath.Join(t.TempDir(), "run")
	// the workload's noise is off already: the cuts left to try are few
	// (clients, keys, the run's length), and the test short
	s := scenarios.Scenario{ServerSettings: scenarios.ServerSettings{Server: "valkey-9.1"}, ClientSettings: scenarios.ClientSettings{Client: "test-always-acquires-shrink"}, TrafficSettings: scenarios.TrafficSettings{Duration: 5 * time.Second, TTL: time.Second, Seed: 3, Clients: 6, Keys: 4, BackoffMin: 50 * time.Millisecond, BackoffMax: 50 * time.Millisecond, ObserveEvery: scenarios.None}}.Quiet()
	s.LateRate, s.AbandonRate = scenarios.None, scenarios.None
	o, err := harness.Execute(ctx, eng(t), s, harness.Options{Out: from, StopOnViolation: true})
	if err != nil {
		t.Fatal(err)
	}
	if o.Check.Verdict != "violated" {
		t.Fatalf("the run to shrink: %s, want violated", o.Check.Verdict)
	}
	out := filepath.Join(t.TempDir(), "shrunk")
	res, err := Run(ctx, eng(t), from, Options{Out: out, Budget: 4 * time.Minute, Tries: 1, Confirm: 2})
	if err != nil {
		t.Fatal(err)
	}
	for _, st := range res.Steps {
		t.Logf("%s: %d of %d, %.1f s", st.What, st.Reproduced, st.Runs, st.Seconds)
	}
	if !res.Confirmed || res.Reproduced != 2 || res.Kind != "double_holder" {
		t.Fatalf("%+v: want double_holder confirmed in 2 of 2", res)
	}
	if res.Before.Clients != 6 || res.After.Clients != 2 || res.After.Keys != 1 || res.After.Ops*5 > res.Before.Ops {
		t.Errorf("before %s, after %s: want 6 clients cut to 2 on one key, 5 times fewer operations", res.Before, res.After)
	}
	tr, err := scenarios.LoadTrace(filepath.Join(out, scenarios.TraceFileName))
	if err != nil {
		t.Fatal(err)
	}
	if tr.Workers != 2 || len(tr.Steps) != 2 || tr.Steps[0].Kind != scenarios.StepAcquire || tr.Steps[1].Kind != scenarios.StepAcquire || len(res.Script) != 2 {
		t.Errorf("the script %v: want two workers' acquires", tr.Describe())
	}
	var back reports.Shrunk
	b, err := os.ReadFile(filepath.Join(out, reports.ShrinkFileName))
	if err == nil {
		err = json.Unmarshal(b, &back)
	}
	if err != nil || back.Command != res.Command || len(back.Steps) == 0 {
		t.Fatalf("shrink.json: %v, %+v", err, back)
	}
	if _, err := os.Stat(filepath.Join(out, "tries")); !os.IsNotExist(err) {
		t.Errorf("tries/ left behind: %v", err)
	}
	for _, name := range []string{"history.json", "result.json", "report.html"} {
		if _, err := os.Stat(filepath.Join(out, name)); err != nil {
			t.Errorf("the reproducer's %s: %v", name, err)
		}
	}
}

// alwaysAcquires reports every acquire as held with a new token.
type alwaysAcquires struct{ lockclient.Client }

func (alwaysAcquires) Acquire(context.Context, string, time.Duration) lockclient.Result {
	return lockclient.Result{Outcome: history.OK, Token: fmt.Sprint(time.Now().UnixNano())}
}

func TestMain(m *testing.M) { testengine.Main(m) }

func eng(t *testing.T) *topology.Engine { return testengine.Get(t) }
