package historyjson

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
	"time"
)

// JSONFile is one of the small JSON files of a run's folder (scenario.json,
// result.json, trace.json...), read whole and found well-formed by the
// history's lexer: an error in it, of syntax or of a field's type, names
// the file, line and column and what was expected there, as history.json's
// do, instead of encoding/json's byte offset.
type JSONFile struct {
	Path string
	data []byte
	// line is the file's line data starts on (0: the first): a JSON
	// lines file is read a line at a time.
	line int
}

// MaxJSONFile bounds the files JSONFile reads: lockcheck's own are far
// smaller, and a larger one is refused before it is read.
const MaxJSONFile = 64 << 20

// ReadJSONFile reads the JSON file at path and checks its syntax.
func ReadJSONFile(path string) (*JSONFile, error) {
	f, fi, err := OpenInput(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if fi.Size() > MaxJSONFile {
		return nil, fmt.Errorf("%s is %d MiB; lockcheck's JSON files are at most %d MiB: give the file lockcheck wrote", path, fi.Size()>>20, MaxJSONFile>>20)
	}
	b, err := io.ReadAll(io.LimitReader(f, MaxJSONFile+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	jf := &JSONFile{Path: path, data: b}
	if err := jf.check(); err != nil {
		return nil, err
	}
	return jf, nil
}

// check checks the syntax, as ReadJSONFile does.
func (jf *JSONFile) check() error {
	err := checkJSON(jf.data)
	if err == errMore {
		err = errAt(len(jf.data), "the file ends before its value does: it was cut short")
	}
	return jf.wrap(err)
}

// checkJSON checks that b is one JSON value and nothing else; errMore
// when b ends inside it.
func checkJSON(b []byte) error {
	p := skipSpace(b, 0)
	if p == len(b) {
		return errAt(0, "the file is empty")
	}
	// a space after the file: a number at its end is complete
	padded := append(b[:len(b):len(b)], ' ')
	end, err := skipValue(padded, p, 0)
	if err != nil {
		return err
	}
	if q := skipSpace(b, end); q < len(b) {
		return want(b, q, "the end of the file after its value")
	}
	return nil
}

// Decode decodes the file into v; a field of the wrong type is named with
// its line and column.
func (jf *JSONFile) Decode(v any) error {
	err := json.Unmarshal(jf.data, v)
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		at, field := locate(jf.data, te)
		if field != "" {
			field += ": "
		}
		return jf.wrap(errAt(at, "%swant %s, got %s", field, wantType(te.Type, te.Value), gotValue(te.Value)))
	}
	if err != nil {
		return fmt.Errorf("%s: %w", jf.Path, err)
	}
	return nil
}

// wrap turns a lexer's error into the file's line and column.
func (jf *JSONFile) wrap(err error) error {
	var je *jsonError
	if !errors.As(err, &je) {
		return err
	}
	at := min(max(je.at, 0), len(jf.data))
	line := max(jf.line, 1) + bytes.Count(jf.data[:at], []byte{'\n'})
	col := at - (bytes.LastIndexByte(jf.data[:at], '\n') + 1) + 1
	return fmt.Errorf("%s: line %d, column %d: %s", jf.Path, line, col, je.msg)
}

// wantType says what a value of Go type t is in JSON.
func wantType(t reflect.Type, got string) string {
	if t == nil {
		return "another value"
	}
	if t == reflect.TypeFor[time.Duration]() {
		if strings.HasPrefix(got, "string") {
			return `a duration such as "15s"`
		}
		return "a duration in whole nanoseconds"
	}
	switch t.Kind() {
	case reflect.Pointer:
		return wantType(t.Elem(), got)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return fmt.Sprintf("a whole number (%s)", t)
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.Map, reflect.Struct:
		return "an object"
	}
	return t.String()
}

// gotValue names encoding/json's description of the value found.
func gotValue(v string) string {
	kind, text, _ := strings.Cut(v, " ")
	switch kind {
	case "number":
		if text != "" {
			return "the number " + text
		}
		return "a number"
	case "string":
		if text != "" {
			return "the string " + text
		}
		return "a string"
	case "bool":
		return "a boolean"
	case "array":
		return "an array"
	case "object":
		return "an object"
	}
	return v
}
