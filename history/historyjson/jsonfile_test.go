package historyjson

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestJSONFileErrors: a bad JSON file is refused with its line and column
// and what was expected there, whether its syntax or a field's type is
// wrong, however deep the field.
func TestJSONFileErrors(t *testing.T) {
	type item struct {
		N int `json:"n"`
	}
	type doc struct {
		Name  string `json:"name"`
		Items []item `json:"items"`
	}
	for _, c := range []struct{ text, want string }{
		{"", "line 1, column 1: the file is empty"},
		{"{\"name\": \"a\",\n  \"items\": [", "line 2, column 13: the file ends before its value does"},
		{"{\"name\": 'a'}", "line 1, column 10: want a value"},
		{"{\"name\": \"a\"} x", "line 1, column 15: want the end of the file"},
		{"{\"name\": 5}", "line 1, column 10: name: want a string, got a number"},
		{"{\"items\": [{\"n\": 1},\n {\"n\": 1.5}]}", "line 2, column 8: items.n: want a whole number (int), got the number 1.5"},
		{"{\"items\": {}}", "line 1, column 11: items: want an array, got an object"},
	} {
		path := filepath.Join(t.TempDir(), "f.json")
		if err := os.WriteFile(path, []byte(c.text), 0o644); err != nil {
			t.Fatal(err)
		}
		jf, err := ReadJSONFile(path)
		if err == nil {
			var d doc
			err = jf.Decode(&d)
		}
		if err == nil || !strings.Contains(err.Error(), path+": "+c.want) {
			t.Errorf("%q: error %v, want %q", c.text, err, c.want)
		}
	}
}
