package historyjson

import (
	"encoding/json"
	"strings"
)

// locate finds the value a type error is about, for its line and column:
// the first value in the file's order at the error's field path whose
// JSON type (and text, when the error gives it) is the one the error
// names. Arrays on the path are passed through (the path does not index
// them), and a path's part that no member matches, as an embedded
// struct's, is skipped. encoding/json's own offset is the fallback: it
// points past the value, and inside a custom decoder's value it is not
// the file's.
// It returns the position and the path of member names that led there.
func locate(b []byte, te *json.UnmarshalTypeError) (int, string) {
	var path []string
	if te.Field != "" {
		path = strings.Split(te.Field, ".")
	}
	var names []string
	if at, ok := find(b, skipSpace(b, 0), path, te.Value, 0, &names); ok {
		return at, strings.Join(names, ".")
	}
	return int(min(max(te.Offset, 0), int64(len(b)))), te.Field
}

// find looks for the value under b[p] that path leads to and that
// matches value; b is well-formed (checkJSON).
func find(b []byte, p int, path []string, value string, depth int, names *[]string) (int, bool) {
	if p >= len(b) || depth > maxDepth {
		return 0, false
	}
	if len(path) == 0 && matches(b, p, value, depth) {
		return p, true
	}
	c := b[p]
	if c != '{' && c != '[' {
		return 0, false
	}
	obj, closing := c == '{', byte(']')
	if obj {
		closing = '}'
	}
	q := skipSpace(b, p+1)
	named := false
	for q < len(b) && b[q] != closing {
		next, visit := path, true
		if obj {
			end, plain, err := lexString(b, q)
			if err != nil {
				return 0, false
			}
			name := text(b, q, end, plain)
			if q, err = colon(b, end); err != nil {
				return 0, false
			}
			if len(path) > 0 {
				visit = strings.EqualFold(name, path[0])
				next = path[1:]
				named = named || visit
			}
		}
		if visit {
			if obj && len(path) > 0 {
				*names = append(*names, path[0])
			}
			if at, ok := find(b, q, next, value, depth+1, names); ok {
				return at, true
			}
			if obj && len(path) > 0 {
				*names = (*names)[:len(*names)-1]
			}
		}
		end, err := skipValue(b, q, depth)
		if err != nil {
			return 0, false
		}
		q = skipSpace(b, end)
		if q < len(b) && b[q] == ',' {
			q = skipSpace(b, q+1)
		}
	}
	if obj && !named && len(path) > 0 {
		return find(b, p, path[1:], value, depth, names)
	}
	return 0, false
}

// matches says b[p] is a value of the type encoding/json's description
// names ("string", "number 1.5", "bool", "array", "object").
func matches(b []byte, p int, value string, depth int) bool {
	kind, want, _ := strings.Cut(value, " ")
	c := b[p]
	var ok bool
	switch kind {
	case "string":
		ok = c == '"'
	case "number":
		ok = c == '-' || '0' <= c && c <= '9'
	case "bool":
		ok = c == 't' || c == 'f'
	case "array":
		ok = c == '['
	case "object":
		ok = c == '{'
	}
	if !ok || want == "" || c == '[' || c == '{' {
		return ok
	}
	end, err := skipValue(b, p, depth)
	return err == nil && string(b[p:end]) == want
}
