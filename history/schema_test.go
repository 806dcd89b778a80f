package history_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/lockcheck/lockcheck/history"
	"github.com/lockcheck/lockcheck/history/historyjson"
	"github.com/lockcheck/lockcheck/history/synth"
)

// schema is the subset of JSON Schema history.schema.json uses; loading
// it refuses any other keyword, so that the validator below checks all
// that the schema says.
type schema struct {
	Ref        string             `json:"$ref"`
	Type       types              `json:"type"`
	Required   []string           `json:"required"`
	Properties map[string]*schema `json:"properties"`
	Items      *schema            `json:"items"`
	Enum       []any              `json:"enum"`
	Minimum    *json.Number       `json:"minimum"`
	Maximum    *json.Number       `json:"maximum"`
	Defs       map[string]*schema `json:"$defs"`
	// annotations only
	Schema      string `json:"$schema"`
	ID          string `json:"$id"`
	Comment     string `json:"$comment"`
	Title       string `json:"title"`
	Description string `json:"description"`
}

// types is "type": one name or a list of them.
type types []string

func (t *types) UnmarshalJSON(b []byte) error {
	var one string
	if json.Unmarshal(b, &one) == nil {
		*t = types{one}
		return nil
	}
	return json.Unmarshal(b, (*[]string)(t))
}

func loadSchema(t *testing.T) *schema {
	t.Helper()
	b, err := os.ReadFile("history.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	dec.UseNumber()
	var s schema
	if err := dec.Decode(&s); err != nil {
		t.Fatalf("history.schema.json: %v", err)
	}
	return &s
}

// validate returns what in v (decoded with UseNumber) breaks s, each
// with its path.
func (root *schema) validate(s *schema, v any, path string) []string {
	if s.Ref != "" {
		def, ok := root.Defs[strings.TrimPrefix(s.Ref, "#/$defs/")]
		if !ok {
			return []string{path + ": no definition " + s.Ref}
		}
		s = def
	}
	var errs []string
	bad := func(format string, args ...any) { errs = append(errs, path+": "+fmt.Sprintf(format, args...)) }
	if len(s.Type) > 0 && !slices.ContainsFunc(s.Type, func(name string) bool { return isType(v, name) }) {
		bad("want %s, got %#v", strings.Join(s.Type, " or "), v)
		return errs
	}
	if len(s.Enum) > 0 && !slices.Contains(s.Enum, v) {
		bad("want one of %v, got %#v", s.Enum, v)
	}
	if n, ok := v.(json.Number); ok {
		x, _ := n.Float64()
		if s.Minimum != nil {
			if m, _ := s.Minimum.Float64(); x < m {
				bad("%s is below the minimum %s", n, *s.Minimum)
			}
		}
		if s.Maximum != nil {
			if m, _ := s.Maximum.Float64(); x > m {
				bad("%s is above the maximum %s", n, *s.Maximum)
			}
		}
	}
	switch v := v.(type) {
	case map[string]any:
		for _, name := range s.Required {
			if _, ok := v[name]; !ok {
				bad("no %q", name)
			}
		}
		for name, p := range s.Properties {
			if x, ok := v[name]; ok {
				errs = append(errs, root.validate(p, x, path+"."+name)...)
			}
		}
	case []any:
		if s.Items != nil {
			for i, x := range v {
				errs = append(errs, root.validate(s.Items, x, fmt.Sprintf("%s[%d]", path, i))...)
			}
		}
	}
	return errs
}

func isType(v any, name string) bool {
	switch v := v.(type) {
	case nil:
		return name == "null"
	case bool:
		return name == "boolean"
	case string:
		return name == "string"
	case []any:
		return name == "array"
	case map[string]any:
		return name == "object"
	case json.Number:
		_, err := strconv.ParseInt(string(v), 10, 64)
		return name == "number" || name == "integer" && err == nil
	}
	return false
}

func (root *schema) validateFile(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return root.validateDoc(t, b)
}

func (root *schema) validateDoc(t *testing.T, doc []byte) []string {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatal(err)
	}
	return root.validate(root, v, "$")
}

// TestSchemaValidatesHistories: the histories lockcheck writes (Save's, a
// run's made from its stream, the generator's, one without operations)
// and the saved histories the checker's tests replay are valid under
// history.schema.json, and read.
func TestSchemaValidatesHistories(t *testing.T) {
	s := loadSchema(t)
	dir := t.TempDir()
	var paths []string
	save := func(name string, h *history.History) {
		path := filepath.Join(dir, name)
		if err := h.Save(path); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, path)
	}
	save("generated.json", synth.Generate(1, 2000, 3, 9))
	save("empty.json", &history.History{Format: history.Format, Meta: history.Meta{Server: "valkey-9.1"}})
	save("every-field.json", &history.History{Format: history.Format, Meta: history.Meta{Topology: "redlock", Fenced: true, Faults: []string{"upgrade"}, Partial: true,
		Coverage: &history.Coverage{Holds: 3, Contended: 1, Extends: 2, Stalls: 1, Pauses: 1, Faults: 1, Planned: 1, HoldsAfterFaults: 1, Covered: true}},
		Scenario: json.RawMessage(`{"seed":3}`),
		Ops: []history.Op{{Client: 1, Worker: 1, Key: "k", Kind: history.Write, Token: "t", TTLms: 5, Fence: 2, HasFence: true, Read: 1, Wrote: 2, Outcome: history.Fail, Error: "ERR", Call: 1, Return: 2},
			{Key: "k", Kind: history.Observe, Read: -2, Outcome: history.OK, Call: 3, Return: 4}},
		Faults: []history.Fault{{Name: "upgrade", Target: "n1", Detail: "9.0 to 9.1", Start: 1, End: 5,
			Nodes: []history.NodeState{{Name: "n1", Version: "9.1.0", Role: "replica", Link: "up", Following: "n2", CanLead: true, Missing: []string{"DELIFEQ"}, Probed: true, Error: "x"}}}}})

	// a run's history.json is made from its stream (SaveStream)
	stream := filepath.Join(dir, history.StreamName)
	rec := history.NewRecorder()
	meta := history.Meta{Server: "valkey-9.1", Client: "native", Keys: 1}
	if err := rec.StreamTo(stream, meta); err != nil {
		t.Fatal(err)
	}
	rec.Add(history.Op{Client: 0, Key: "k", Kind: history.Acquire, Token: "a", TTLms: 100, Outcome: history.OK, Call: 1, Return: 2})
	w := rec.FaultStart("kill-primary", "n1", "")
	rec.FaultEnd(w)
	if err := rec.CloseStream(); err != nil {
		t.Fatal(err)
	}
	head := rec.History(meta)
	head.Format = history.Format
	run := filepath.Join(dir, "run.json")
	if _, err := history.SaveStream(stream, run, head); err != nil {
		t.Fatal(err)
	}
	paths = append(paths, run)

	saved, _ := filepath.Glob("../checker/testdata/histories/*.json")
	for _, p := range saved {
		if !strings.HasSuffix(p, ".options.json") && !strings.HasSuffix(p, ".findings.json") {
			paths = append(paths, p)
		}
	}
	if len(paths) < 10 {
		t.Fatalf("%d histories to validate: the saved ones are missing", len(paths))
	}
	for _, p := range paths {
		if errs := s.validateFile(t, p); len(errs) > 0 {
			t.Errorf("%s is not valid under history.schema.json:\n%s", filepath.Base(p), strings.Join(errs, "\n"))
		}
		if _, err := historyjson.Load(p); err != nil {
			t.Errorf("%s: %v", filepath.Base(p), err)
		}
	}
}

// TestSchemaRefuses: the validator finds what the schema forbids, so
// that the test above would see a history that breaks it.
func TestSchemaRefuses(t *testing.T) {
	s := loadSchema(t)
	op := `{"client": 1, "key": "k", "kind": "acquire", "outcome": "ok", "call": 1, "return": 2}`
	if errs := s.validateDoc(t, []byte(`{"ops": [`+op+`]}`)); len(errs) > 0 {
		t.Fatalf("a minimal history is refused: %v", errs)
	}
	for _, c := range []struct{ doc, want string }{
		{`{"meta": {}}`, `$: no "ops"`},
		{`{"ops": {}}`, "$.ops: want array or null"},
		{`{"format": 3, "ops": []}`, "$.format: 3 is above the maximum 2"},
		{`{"format": 1.5, "ops": []}`, "$.format: want integer"},
		{`{"ops": [{"client": 1, "kind": "acquire", "outcome": "ok", "call": 1, "return": 2}]}`, `$.ops[0]: no "key"`},
		{`{"ops": [` + strings.Replace(op, `"acquire"`, `"grab"`, 1) + `]}`, "$.ops[0].kind: want one of"},
		{`{"ops": [` + strings.Replace(op, `"call": 1`, `"call": "1"`, 1) + `]}`, "$.ops[0].call: want integer"},
		{`{"ops": [], "faults": [{"name": "x", "start": 1}]}`, `$.faults[0]: no "end"`},
		{`{"ops": [], "faults": [{"name": "x", "start": 1, "end": 2, "nodes": [{"name": "n", "can_lead": "yes"}]}]}`, "$.faults[0].nodes[0].can_lead: want boolean"},
	} {
		errs := s.validateDoc(t, []byte(c.doc))
		if !slices.ContainsFunc(errs, func(e string) bool { return strings.HasPrefix(e, c.want) }) {
			t.Errorf("%s: got %v, want %q", c.doc, errs, c.want)
		}
	}
}

// TestSchemaMatchesTheTypes: the schema names every field of the types
// history.json is made of, and no other, and its format is the one this
// build writes.
func TestSchemaMatchesTheTypes(t *testing.T) {
	s := loadSchema(t)
	for _, c := range []struct {
		s *schema
		v any
	}{{s, history.History{}}, {s.Defs["op"], history.Op{}}, {s.Defs["meta"], history.Meta{}}, {s.Defs["fault"], history.Fault{}}, {s.Defs["node"], history.NodeState{}}, {s.Defs["coverage"], history.Coverage{}}} {
		typ := reflect.TypeOf(c.v)
		if c.s == nil {
			t.Fatalf("the schema has no definition for %s", typ)
		}
		var fields, props []string
		for f := range typ.Fields() {
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			fields = append(fields, name)
		}
		for name := range c.s.Properties {
			props = append(props, name)
		}
		slices.Sort(fields)
		slices.Sort(props)
		if !slices.Equal(fields, props) {
			t.Errorf("%s has the JSON fields %v; the schema names %v", typ, fields, props)
		}
	}
	if max := s.Properties["format"].Maximum; max == nil || string(*max) != strconv.Itoa(history.Format) {
		t.Errorf("the schema's format goes up to %v; this build writes format %d", max, history.Format)
	}
	if want := fmt.Sprintf("format %d", history.Format); !strings.Contains(s.Title, want) {
		t.Errorf("the schema's title %q does not say %q", s.Title, want)
	}
}
