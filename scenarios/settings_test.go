package scenarios

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// TestSettingsCoverScenario: every field of a Scenario is one row of the
// table of settings, and each row's flag and scenario.json key are its
// own: a field without a row would be a setting a replay loses.
func TestSettingsCoverScenario(t *testing.T) {
	rows := map[string]int{}
	flags, keys := map[string]bool{}, map[string]bool{}
	for _, st := range Settings() {
		if st.Field != "" {
			rows[st.Field]++
			st.field(&Scenario{}) // panics on a field Scenario lacks
		}
		if st.Flag != "" {
			if flags[st.Flag] {
				t.Errorf("flag --%s is in two rows", st.Flag)
			}
			flags[st.Flag] = true
		}
		if key, _, _ := strings.Cut(st.JSON, ","); key != "" {
			if keys[key] {
				t.Errorf("scenario.json key %q is in two rows", key)
			}
			keys[key] = true
		}
		if st.Field != "" && st.JSON == "" {
			t.Errorf("field %s has no scenario.json key", st.Field)
		}
	}
	for _, f := range reflect.VisibleFields(reflect.TypeFor[Scenario]()) {
		if !f.Anonymous && rows[f.Name] != 1 {
			t.Errorf("Scenario field %s is in %d rows of the table of settings, want 1", f.Name, rows[f.Name])
		}
	}
	for _, key := range jsonOrder {
		if !keys[key] {
			t.Errorf("jsonOrder names %q, which no row has", key)
		}
	}
}

// TestCommittedScenariosRoundTrip: every scenario committed in the
// repository (the saved histories carry theirs as scenario.json has it)
// reads and is written again to the same bytes.
func TestCommittedScenariosRoundTrip(t *testing.T) {
	files, _ := filepath.Glob("../checker/testdata/histories/*.json")
	more, _ := filepath.Glob("../examples/*/history.json")
	n := 0
	for _, path := range append(files, more...) {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var head struct {
			Scenario json.RawMessage `json:"scenario"`
		}
		if json.Unmarshal(b, &head) != nil || len(head.Scenario) == 0 {
			continue
		}
		var s Scenario
		if err := json.Unmarshal(head.Scenario, &s); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		again, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		var want bytes.Buffer
		if err := json.Compact(&want, head.Scenario); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(again, want.Bytes()) {
			t.Errorf("%s: the scenario is written again as\n%s\nwant\n%s", path, again, want.Bytes())
		}
		if resolved := s.WithDefaults(); !reflect.DeepEqual(resolved, s) {
			t.Errorf("%s: a saved scenario is resolved, yet defaults changed it:\n%+v\n%+v", path, s, resolved)
		}
		n++
	}
	if n == 0 {
		t.Fatal("no committed scenario found")
	}
}

// TestArgsFollowTheTable: Args writes the rows in the table's order.
func TestArgsFollowTheTable(t *testing.T) {
	s := Defaults()
	s.Server, s.Faults, s.Seed = "valkey-9.1", []string{"kill-primary"}, 7
	args := s.Args()
	var order []string
	for _, a := range args {
		name, _, _ := strings.Cut(strings.TrimPrefix(a, "--"), "=")
		order = append(order, name)
	}
	var want []string
	for _, st := range Settings() {
		if slices.Contains(order, st.Flag) {
			want = append(want, st.Flag)
		}
	}
	if !slices.Equal(order, want) {
		t.Fatalf("Args %v: flags in the order %v, want the table's %v", args, order, want)
	}
}
