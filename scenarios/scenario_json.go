package scenarios

import (
	"encoding/json"
	"fmt"
	"os"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/lockcheck/lockcheck/history/historyjson"

	"github.com/lockcheck/lockcheck/scenarios/fault"
)

// scenarioTimes are a Scenario's durations as people write them ("15s"),
// so that scenario.json reads like the flags that made it.
type scenarioTimes struct {
	Duration       string `json:"duration,omitempty"`
	TTL            string `json:"ttl,omitempty"`
	WorkMin        string `json:"work_min,omitempty"`
	WorkMax        string `json:"work_max,omitempty"`
	ObserveEvery   string `json:"observe_every,omitempty"`
	BackoffMin     string `json:"backoff_min,omitempty"`
	BackoffMax     string `json:"backoff_max,omitempty"`
	WriteGap       string `json:"write_gap,omitempty"`
	FenceGap       string `json:"fence_gap,omitempty"`
	ClockTolerance string `json:"clock_tolerance,omitempty"`
	CallTimeout    string `json:"call_timeout,omitempty"`
	MinReplicasLag string `json:"min_replicas_max_lag,omitempty"`
}

// fields pairs each text with its duration.
func (t *scenarioTimes) fields(s *Scenario) map[*string]*time.Duration {
	return map[*string]*time.Duration{
		&t.Duration: &s.Duration, &t.TTL: &s.TTL, &t.WorkMin: &s.WorkMin, &t.WorkMax: &s.WorkMax,
		&t.ObserveEvery: &s.ObserveEvery, &t.BackoffMin: &s.BackoffMin, &t.BackoffMax: &s.BackoffMax,
		&t.WriteGap: &s.WriteGap, &t.FenceGap: &s.FenceGap, &t.ClockTolerance: &s.ClockTolerance,
		&t.CallTimeout: &s.CallTimeout, &t.MinReplicasLag: &s.MinReplicasMaxLag,
	}
}

// plainScenario has Scenario's fields without its methods.
type plainScenario Scenario

// MarshalJSON writes durations as text ("15s").
func (s Scenario) MarshalJSON() ([]byte, error) {
	var t scenarioTimes
	for text, d := range t.fields(&s) {
		if *d != 0 {
			*text = d.String()
		}
	}
	return json.Marshal(struct {
		plainScenario
		scenarioTimes
	}{plainScenario(s), t})
}

// UnmarshalJSON reads what MarshalJSON writes.
func (s *Scenario) UnmarshalJSON(b []byte) error {
	var v struct {
		plainScenario
		scenarioTimes
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*s = Scenario(v.plainScenario)
	for _, f := range v.scenarioTimes.named(s) {
		if *f.text == "" {
			continue
		}
		parsed, err := time.ParseDuration(*f.text)
		if err != nil {
			// a type error, so that the file's reader names its line
			return &json.UnmarshalTypeError{Value: "string " + strconv.Quote(*f.text), Type: reflect.TypeFor[time.Duration](), Field: f.name}
		}
		*f.d = parsed
	}
	return nil
}

// named is fields in the order of the struct, with each one's JSON name:
// the first bad one is the one an error names, every time.
func (t *scenarioTimes) named(s *Scenario) []namedTime {
	var out []namedTime
	fields := t.fields(s)
	rt, rv := reflect.TypeFor[scenarioTimes](), reflect.ValueOf(t).Elem()
	for i := range rt.NumField() {
		text := rv.Field(i).Addr().Interface().(*string)
		name, _, _ := strings.Cut(rt.Field(i).Tag.Get("json"), ",")
		out = append(out, namedTime{name, text, fields[text]})
	}
	return out
}

type namedTime struct {
	name string
	text *string
	d    *time.Duration
}

// RunFile is a run folder's scenario.json: the resolved scenario and the
// fault schedule its seed gave, with each fault's planned offset from the
// workload's start. It is written before anything starts.
type RunFile struct {
	// Format is RunFileFormat; a reader refuses a newer one.
	Format   int           `json:"format"`
	Scenario Scenario      `json:"scenario"`
	Schedule []fault.Event `json:"schedule"`
	// Replay is the command that runs the scenario again.
	Replay string `json:"replay"`
}

// RunFileFormat is the version of scenario.json this build writes.
const RunFileFormat = 1

// RunFileName is the file's name in a run folder.
const RunFileName = "scenario.json"

// Save writes the file.
func (f RunFile) Save(path string) error {
	b, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}

// LoadRunFile reads a run folder's scenario.json. Its format is read
// first: a newer one is refused as such, not for a field this build would
// misread.
func LoadRunFile(path string) (RunFile, error) {
	var f RunFile
	jf, err := historyjson.ReadJSONFile(path)
	if err != nil {
		return f, err
	}
	var head struct {
		Format int `json:"format"`
	}
	if err := jf.Decode(&head); err != nil {
		return f, err
	}
	if head.Format > RunFileFormat {
		return f, fmt.Errorf("%s has format %d; this lockcheck reads up to %d: use a newer lockcheck", path, head.Format, RunFileFormat)
	}
	if err := jf.Decode(&f); err != nil {
		return f, err
	}
	return f, nil
}
