package scenarios

import (
	"encoding/json"
	"fmt"
	"os"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/lockcheck/lockcheck/history/historyjson"

	"github.com/lockcheck/lockcheck/scenarios/fault"
)

// jsonOrder is the order scenario.json has always had its keys in, so
// that a scenario written again is the same bytes. A row's key not named
// here (a setting added since) follows them, in the table's order.
var jsonOrder = strings.Fields(`server node_builds upgrade_to node_config topology aof fsync nodes
	min_replicas_to_write client fenced faults events until_covered seed clients keys
	stall_rate pause_rate late_rate abandon_rate wait fence_gap_random
	duration ttl work_min work_max observe_every backoff_min backoff_max write_gap
	fence_gap clock_tolerance call_timeout min_replicas_max_lag`)

// jsonRows are the rows written to scenario.json, in jsonOrder; jsonType
// is the flat object they make, one field per row (a duration as its
// text, "15s", so that the file reads like the flags that made it), with
// the row's key and options as its tag: encoding/json reads and writes
// it, and names a mistyped key in its error.
var jsonRows, jsonType = jsonLayout()

func jsonLayout() ([]Setting, reflect.Type) {
	var rows []Setting
	for _, st := range Settings() {
		if st.JSON != "" {
			rows = append(rows, st)
		}
	}
	rank := func(st Setting) int {
		key, _, _ := strings.Cut(st.JSON, ",")
		if i := slices.Index(jsonOrder, key); i >= 0 {
			return i
		}
		return len(jsonOrder)
	}
	slices.SortStableFunc(rows, func(a, b Setting) int { return rank(a) - rank(b) })
	fields := make([]reflect.StructField, len(rows))
	for i, st := range rows {
		t := st.field(&Scenario{}).Type()
		if st.isDuration() {
			t = reflect.TypeFor[string]()
		}
		fields[i] = reflect.StructField{Name: fmt.Sprintf("F%d", i), Type: t, Tag: reflect.StructTag(`json:"` + st.JSON + `"`)}
	}
	return rows, reflect.StructOf(fields)
}

// MarshalJSON writes the rows' keys, durations as text ("15s").
func (s Scenario) MarshalJSON() ([]byte, error) {
	v := reflect.New(jsonType).Elem()
	for i, st := range jsonRows {
		f := st.field(&s)
		if st.isDuration() {
			if d := time.Duration(f.Int()); d != 0 {
				v.Field(i).SetString(d.String())
			}
			continue
		}
		v.Field(i).Set(f)
	}
	return json.Marshal(v.Interface())
}

// UnmarshalJSON reads what MarshalJSON writes.
func (s *Scenario) UnmarshalJSON(b []byte) error {
	v := reflect.New(jsonType)
	if err := json.Unmarshal(b, v.Interface()); err != nil {
		return err
	}
	var out Scenario
	for i, st := range jsonRows {
		f, in := st.field(&out), v.Elem().Field(i)
		if !st.isDuration() {
			f.Set(in)
			continue
		}
		if in.String() == "" {
			continue
		}
		d, err := time.ParseDuration(in.String())
		if err != nil {
			// a type error, so that the file's reader names its line
			name, _, _ := strings.Cut(st.JSON, ",")
			return &json.UnmarshalTypeError{Value: "string " + strconv.Quote(in.String()), Type: durationType, Field: name}
		}
		f.SetInt(int64(d))
	}
	*s = out
	return nil
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
