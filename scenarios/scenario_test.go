package scenarios

import (
	"encoding/json"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/lockcheck/lockcheck/scenarios/fault"
	"github.com/lockcheck/lockcheck/scenarios/lockclient"
	"github.com/lockcheck/lockcheck/topology"
)

// TestScenarioDefaults: zero fields take the one table's defaults, the
// shares whose default is none stay none, None turns a default off, and a
// resolved scenario comes back unchanged.
func TestScenarioDefaults(t *testing.T) {
	s := Scenario{Server: "valkey-9.1", TTL: 10 * time.Second, LateRate: None}.WithDefaults()
	if s.Topology != topology.Standalone || s.Client != "native" || s.Duration != time.Minute || s.Clients != 6 || s.Keys != 1 {
		t.Fatalf("defaults: %+v", s)
	}
	if s.WorkMin != 2*time.Second || s.WorkMax != 10*time.Second || s.ObserveEvery != 2500*time.Millisecond || s.WriteGap != time.Second {
		t.Fatalf("TTL-derived defaults: %+v", s)
	}
	if s.StallRate != DefaultStallRate || s.PauseRate != DefaultPauseRate || s.LateRate != None || s.AbandonRate != 0.02 || len(s.Faults) != 0 || s.Wait.Enabled() {
		t.Fatalf("shares: %+v", s)
	}
	if again := s.WithDefaults(); !reflect.DeepEqual(again, s) {
		t.Fatalf("a resolved scenario changed:\n%+v\n%+v", s, again)
	}
}

// TestScenarioJSON: scenario.json round-trips every field, durations as
// text.
func TestScenarioJSON(t *testing.T) {
	s := Scenario{Server: "valkey-9.1", NodeBuilds: map[string]string{"n1": "valkey-8.1"}, Topology: topology.Sentinel, AOF: true,
		Client: "external:python3 a.py", Fenced: true, Faults: []string{"kill-primary", "clock-jump"}, Seed: 42, StallRate: 0.25,
		Wait:     lockclient.WaitOptions{Replicas: 1, AOF: true, Local: 1, Timeout: 50 * time.Millisecond, OnShort: lockclient.WaitRelease},
		FenceGap: 3 * time.Millisecond, CallTimeout: 2 * time.Second}.WithDefaults()
	f := RunFile{Format: RunFileFormat, Scenario: s, Schedule: []fault.Event{{At: 3 * time.Second, Fault: "kill-primary", Key: LockKey(0)}}, Replay: "lockcheck replay x"}
	path := filepath.Join(t.TempDir(), RunFileName)
	if err := f.Save(path); err != nil {
		t.Fatal(err)
	}
	got, err := LoadRunFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, f) {
		t.Fatalf("round trip:\n%+v\n%+v", got, f)
	}
	b, _ := json.Marshal(s)
	for _, want := range []string{`"ttl":"15s"`, `"work_min":"3s"`, `"timeout":"50ms"`, `"on_short":"release"`, `"node_builds":{"n1":"valkey-8.1"}`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("scenario JSON lacks %s: %s", want, b)
		}
	}
	if strings.Contains(string(b), `"Timeout"`) {
		t.Errorf("the WAIT timeout is written twice: %s", b)
	}
}

// TestScenarioValidate: each setting that cannot run is refused in one
// line naming it.
func TestScenarioValidate(t *testing.T) {
	for _, ok := range []Scenario{
		{Server: "valkey-9.1", Topology: topology.Sentinel, Faults: []string{"kill-primary"}},
		{Server: "valkey-9.1", Topology: topology.Redlock, Client: "redlock", Nodes: 5, AOF: true, Fsync: topology.FsyncEverysec, Faults: []string{"crash-restart", "clock-jump"}},
		{Server: "valkey-9.1", Topology: topology.Redlock, Client: "external:/bin/adapter"},
	} {
		if err := ok.Validate(); err != nil {
			t.Fatal(err)
		}
	}
	for want, s := range map[string]Scenario{
		"no server build":                            {},
		"unknown client":                             {Server: "v", Client: "nope"},
		"does not fit a standalone":                  {Server: "v", Faults: []string{"kill-primary"}},
		"unknown fault":                              {Server: "v", Faults: []string{"nope"}},
		"stall rate 2":                               {Server: "v", StallRate: 2},
		"shorter than work min":                      {Server: "v", WorkMin: time.Second, WorkMax: time.Millisecond},
		"WAITAOF needs AOF":                          {Server: "v", Wait: lockclient.WaitOptions{AOF: true, Local: 1, OnShort: lockclient.WaitGoOn}},
		"always falls short":                         {Server: "v", Wait: lockclient.WaitOptions{Replicas: 1, OnShort: lockclient.WaitGoOn}},
		"on-short":                                   {Server: "v", Topology: topology.Sentinel, Wait: lockclient.WaitOptions{Replicas: 1, OnShort: "retry"}},
		"client native locks one server":             {Server: "v", Topology: topology.Redlock},
		"fsync everysec needs AOF":                   {Server: "v", Fsync: topology.FsyncEverysec},
		"unknown fsync policy":                       {Server: "v", AOF: true, Fsync: "sometimes"},
		"only a redlock topology":                    {Server: "v", Nodes: 5},
		"1 to 9 nodes":                               {Server: "v", Topology: topology.Redlock, Client: "redlock", Nodes: 12},
		"without min-replicas-to-write does nothing": {Server: "v", Topology: topology.Sentinel, MinReplicasMaxLag: time.Second},
		"refuses every write: choose at most 1":      {Server: "v", Topology: topology.Cluster, MinReplicas: 2},
		"refuses every write: choose at most 0":      {Server: "v", MinReplicas: 1},
		"crash-restart does not fit a sentinel topology: choose redlock": {Server: "v", Topology: topology.Sentinel, Faults: []string{"crash-restart"}},
	} {
		err := s.Validate()
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%+v: got %v, want an error with %q", s, err, want)
		}
	}
}

// TestScenarioSchedule: the schedule is the seed's alone.
func TestScenarioSchedule(t *testing.T) {
	s := Scenario{Server: "v", Topology: topology.Sentinel, Faults: []string{"kill-primary", "clock-jump"}, Seed: 9, Duration: 2 * time.Minute}
	a, err := s.Schedule()
	if err != nil || len(a) == 0 {
		t.Fatalf("schedule %v, %v", a, err)
	}
	b, _ := s.Schedule()
	if !reflect.DeepEqual(a, b) {
		t.Fatalf("two schedules of one seed differ: %v %v", a, b)
	}
	s.Seed++
	if c, _ := s.Schedule(); reflect.DeepEqual(a, c) {
		t.Fatalf("another seed gave the same schedule %v", c)
	}
}
