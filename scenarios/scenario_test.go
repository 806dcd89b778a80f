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
	s := Scenario{ServerSettings: ServerSettings{Server: "valkey-9.1"}, TrafficSettings: TrafficSettings{TTL: 10 * time.Second, LateRate: None}}.WithDefaults()
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
	s := Scenario{
		ServerSettings:  ServerSettings{Server: "valkey-9.1", NodeBuilds: map[string]string{"n1": "valkey-8.1"}, Topology: topology.Sentinel, AOF: true},
		ClientSettings:  ClientSettings{Client: "external:python3 a.py", Fenced: true, Wait: lockclient.WaitOptions{Replicas: 1, AOF: true, Local: 1, Timeout: 50 * time.Millisecond, OnShort: lockclient.WaitRelease}, FenceGap: 3 * time.Millisecond, CallTimeout: 2 * time.Second},
		FaultSettings:   FaultSettings{Faults: []string{"kill-primary", "clock-jump"}},
		TrafficSettings: TrafficSettings{Seed: 42, StallRate: 0.25},
	}.WithDefaults()
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
		{ServerSettings: ServerSettings{Server: "valkey-9.1", Topology: topology.Sentinel}, FaultSettings: FaultSettings{Faults: []string{"kill-primary"}}},
		{ServerSettings: ServerSettings{Server: "valkey-9.1", Topology: topology.Redlock, Nodes: 5, AOF: true, Fsync: topology.FsyncEverysec}, ClientSettings: ClientSettings{Client: "redlock"}, FaultSettings: FaultSettings{Faults: []string{"crash-restart", "clock-jump"}}},
		{ServerSettings: ServerSettings{Server: "valkey-9.1", Topology: topology.Redlock}, ClientSettings: ClientSettings{Client: "external:/bin/adapter"}},
	} {
		if _, err := ok.Resolve(); err != nil {
			t.Fatal(err)
		}
	}
	for want, s := range map[string]Scenario{
		"no server build":                            {},
		"unknown client":                             {ServerSettings: ServerSettings{Server: "v"}, ClientSettings: ClientSettings{Client: "nope"}},
		"does not fit a standalone":                  {ServerSettings: ServerSettings{Server: "v"}, FaultSettings: FaultSettings{Faults: []string{"kill-primary"}}},
		"unknown fault":                              {ServerSettings: ServerSettings{Server: "v"}, FaultSettings: FaultSettings{Faults: []string{"nope"}}},
		"stall rate 2":                               {ServerSettings: ServerSettings{Server: "v"}, TrafficSettings: TrafficSettings{StallRate: 2}},
		"shorter than work min":                      {ServerSettings: ServerSettings{Server: "v"}, TrafficSettings: TrafficSettings{WorkMin: time.Second, WorkMax: time.Millisecond}},
		"WAITAOF needs AOF":                          {ServerSettings: ServerSettings{Server: "v"}, ClientSettings: ClientSettings{Wait: lockclient.WaitOptions{AOF: true, Local: 1, OnShort: lockclient.WaitGoOn}}},
		"always falls short":                         {ServerSettings: ServerSettings{Server: "v"}, ClientSettings: ClientSettings{Wait: lockclient.WaitOptions{Replicas: 1, OnShort: lockclient.WaitGoOn}}},
		"on-short":                                   {ServerSettings: ServerSettings{Server: "v", Topology: topology.Sentinel}, ClientSettings: ClientSettings{Wait: lockclient.WaitOptions{Replicas: 1, OnShort: "retry"}}},
		"client native locks one server":             {ServerSettings: ServerSettings{Server: "v", Topology: topology.Redlock}},
		"fsync everysec needs AOF":                   {ServerSettings: ServerSettings{Server: "v", Fsync: topology.FsyncEverysec}},
		"unknown fsync policy":                       {ServerSettings: ServerSettings{Server: "v", AOF: true, Fsync: "sometimes"}},
		"only a redlock topology":                    {ServerSettings: ServerSettings{Server: "v", Nodes: 5}},
		"1 to 9 nodes":                               {ServerSettings: ServerSettings{Server: "v", Topology: topology.Redlock, Nodes: 12}, ClientSettings: ClientSettings{Client: "redlock"}},
		"without min-replicas-to-write does nothing": {ServerSettings: ServerSettings{Server: "v", Topology: topology.Sentinel, MinReplicasMaxLag: time.Second}},
		"refuses every write: choose at most 1":      {ServerSettings: ServerSettings{Server: "v", Topology: topology.Cluster, MinReplicas: 2}},
		"refuses every write: choose at most 0":      {ServerSettings: ServerSettings{Server: "v", MinReplicas: 1}},
		"crash-restart does not fit a sentinel topology: choose redlock": {ServerSettings: ServerSettings{Server: "v", Topology: topology.Sentinel}, FaultSettings: FaultSettings{Faults: []string{"crash-restart"}}},
	} {
		_, err := s.Resolve()
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%+v: got %v, want an error with %q", s, err, want)
		}
	}
}

// TestScenarioSchedule: the schedule is the seed's alone.
func TestScenarioSchedule(t *testing.T) {
	s := Scenario{ServerSettings: ServerSettings{Server: "v", Topology: topology.Sentinel}, FaultSettings: FaultSettings{Faults: []string{"kill-primary", "clock-jump"}}, TrafficSettings: TrafficSettings{Seed: 9, Duration: 2 * time.Minute}}.WithDefaults()
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
