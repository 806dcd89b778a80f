package historyjson

import (
	"bytes"
	"encoding/json"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/lockcheck/lockcheck/history"
)

// sample is a history with every field, texts that need escaping, and
// fault windows with nodes.
func sample() *history.History {
	return &history.History{
		Format:   history.Format,
		Meta:     history.Meta{Server: "valkey-9.1", Topology: "sentinel", Client: "native", Seed: -3, TTLms: 1000, Clients: 2, Keys: 2, Fenced: true, Faults: []string{"kill-primary"}, DurationNs: 99},
		Scenario: json.RawMessage(`{"keys":["a","b"]}`),
		Ops: []history.Op{
			{Client: 1, Worker: 1, Key: "lock:{k1}", Kind: history.Acquire, Token: "t1-1", TTLms: 1000, Fence: 7, HasFence: true, Outcome: history.OK, Call: 10, Return: 20},
			{Client: 2, Worker: 0, Key: "lock:{k2}", Kind: history.Write, Read: -1, Wrote: 1 << 62, Outcome: history.Fail, Error: `ERR "quoted" \ <&> é`, Call: 15, Return: 25},
			{Client: 3, Key: "lock:{k1}", Kind: history.Release, Token: "t1-1", Outcome: history.Unknown, Error: "i/o timeout\n", Call: 30, Return: 1<<63 - 1},
			{Key: "lock:{k1}", Kind: history.Observe, Read: -2, Outcome: history.OK, Call: 40, Return: 41},
		},
		Faults: []history.Fault{{Name: "kill-primary", Target: "n1", Start: 12, End: 50, Nodes: []history.NodeState{{Name: "n1", Role: "primary", CanLead: true, Missing: []string{"DELIFEQ"}}}}},
	}
}

// TestReaderLayouts: the same history reads back the same in every layout
// it may come in: Save's lines, encoding/json's one line and indented
// (operations before the faults), jq's indentation with CRLF line ends,
// members and fields in reverse order with whitespace anywhere, and
// through a buffer of a few bytes, which every value crosses.
func TestReaderLayouts(t *testing.T) {
	h := sample()
	dir := t.TempDir()
	saved := filepath.Join(dir, "saved.json")
	if err := h.Save(saved); err != nil {
		t.Fatal(err)
	}
	compact, _ := json.Marshal(h)
	indented, _ := json.MarshalIndent(h, "", "  ")
	crlf := bytes.ReplaceAll(indented, []byte("\n"), []byte("\r\n"))
	reversed, err := relayout(compact, rand.New(rand.NewPCG(1, 2)), true)
	if err != nil {
		t.Fatal(err)
	}
	layouts := map[string][]byte{"compact": compact, "indented": indented, "crlf": crlf, "reversed": reversed}
	layouts["saved"], _ = os.ReadFile(saved)
	for name, doc := range layouts {
		for _, size := range []int{1, 7, bufSize} {
			got, err := readBytes(doc, size)
			if err != nil {
				t.Fatalf("%s, buffer %d: %v", name, size, err)
			}
			var scenario bytes.Buffer // kept as the file lays it out
			json.Compact(&scenario, got.Scenario)
			got.Scenario = scenario.Bytes()
			if !reflect.DeepEqual(got, h) {
				t.Fatalf("%s, buffer %d: read\n%+v\nwant\n%+v", name, size, got, h)
			}
		}
	}
	if !bytes.Contains(reversed, []byte(`"faults"`)) || bytes.Index(reversed, []byte(`"ops"`)) > bytes.Index(reversed, []byte(`"meta"`)) {
		t.Fatalf("the reversed layout does not put the operations first:\n%s", reversed)
	}
}

// readBytes reads the history doc holds through a buffer of size bytes
// to start with.
func readBytes(doc []byte, size int) (*history.History, error) {
	return readAll(newReader("history.json", bytes.NewReader(doc), int64(len(doc)), size))
}

// TestReaderErrors: a malformed history is refused with the operation,
// line and column where it went wrong and what was expected there.
func TestReaderErrors(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct{ doc, want string }{
		{"", "line 1, column 1 (byte 0): the file is empty"},
		{"[]", `want the history's object ('{'), got '['`},
		{"{\"ops\": [\n{\"key\": \"k\"}\n{\"key\": \"k\"}]}", `line 3, column 1 (byte 23): want ',' or ']' after an operation, got '{'`},
		{"{\"ops\": [\n  {\"key\": \"k\",\n   \"call\": 1.5}]}", `op 0 at line 3, column 12 (byte 36): field "call": want an integer of 64 bits, got 1.5`},
		{"{\"ops\": [{\"key\": 3}]}", `op 0 at line 1, column 18 (byte 17): field "key": want a string, got a number`},
		{"{\"ops\": [{}, 7]}", `op 1 at line 1, column 14 (byte 13): want an operation (an object), got a number`},
		{"{\"ops\": [{\"key\" \"k\"}]}", `want ':' after a member name, got '"'`},
		{"{\"ops\": {}}", `want the operations' array, got an object`},
		{"{\"ops\": [], \"OPS\": []}", `a second "OPS": a history has one array of operations`},
		{"{\"ops\": [{\"key\": \"k\"}", "the file ends before the history does: it was cut short"},
		{"{\"ops\": []} x", `want the end of the file after the history's object, got 'x'`},
		{"{\"meta\": {\"seed\": \"7\"}, \"ops\": []}", "its head (format, meta, scenario, faults): json: cannot unmarshal string"},
		{"{\"format\": 99, \"ops\": [{}]}", "has format 99; this lockcheck reads up to 2: use a newer lockcheck"},
		{"{\"ops\": [{\"key\": \"a\tb\"}]}", "want a string's character, got control byte 0x09"},
		{"{\"x\": [1, 2,]}", `want a value (an object, array, string, number, true, false or null), got ']'`},
		{"{\"ops\": [{\"fence\": 01}]}", `want ',' or '}' after a field's value, got '1'`},
	} {
		path := filepath.Join(dir, "h.json")
		os.WriteFile(path, []byte(c.doc), 0o644)
		_, err := Load(path)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: got %v\nwant an error with %q", c.doc, err, c.want)
		}
		var want history.History
		if json.Unmarshal([]byte(c.doc), &want) == nil && want.Format <= history.Format && !strings.Contains(c.want, "a second") {
			t.Errorf("%q: encoding/json accepts it", c.doc)
		}
	}
}

// FuzzReader: the reader gives what encoding/json gives for a History,
// error or not, for any document, and for the same document laid out
// again: compacted, indented, and with every object's members shuffled
// and whitespace between every token; each read through a buffer of a
// few bytes and of the usual size.
func FuzzReader(f *testing.F) {
	h := sample()
	dir := f.TempDir()
	saved := filepath.Join(dir, "saved.json")
	if err := h.Save(saved); err != nil {
		f.Fatal(err)
	}
	doc, _ := os.ReadFile(saved)
	f.Add(doc, uint64(1))
	indented, _ := json.MarshalIndent(h, "", "  ")
	f.Add(indented, uint64(2))
	f.Add([]byte(`{"OPS": [null, {"Key": "k", "\u006bind": "acquire", "call": -0, "x": [{"y": [1e5, true]}]}], "meta": {"seed": 9}, "extra": "\ud83d\ude00"}`), uint64(3))
	f.Add([]byte(`{"ops": null, "faults": [{"name": "x", "start": 1, "end": 2}], "scenario": null}`), uint64(4))
	f.Add([]byte(`{"ops": [{"call": 9223372036854775807, "return": -9223372036854775808, "has_fence": false, "token": "\xff"}]}`), uint64(5))
	f.Add([]byte(`null`), uint64(6))
	f.Fuzz(func(t *testing.T, doc []byte, seed uint64) {
		if len(doc) > 1<<13 {
			return
		}
		rng := rand.New(rand.NewPCG(seed, 9))
		sameAsEncodingJSON(t, doc, rng)
		if json.Valid(doc) {
			var compact, indented bytes.Buffer
			json.Compact(&compact, doc)
			json.Indent(&indented, doc, "", "  ")
			shuffled, err := relayout(doc, rng, false)
			if err != nil {
				t.Fatalf("%s: %v", doc, err)
			}
			for _, d := range [][]byte{compact.Bytes(), indented.Bytes(), shuffled} {
				sameAsEncodingJSON(t, d, rng)
			}
		}
	})
}

// sameAsEncodingJSON fails t unless the reader gives for doc what
// encoding/json gives (an error for a newer format), through a buffer of
// a size drawn from rng and through one of 8 KiB (FuzzReader's largest
// document). A document with "ops" or "format" twice at the top is left
// out: the reader refuses the one and may refuse a newer format on
// seeing the first of the other.
func sameAsEncodingJSON(t *testing.T, doc []byte, rng *rand.Rand) {
	t.Helper()
	if topTwice(doc, "ops") || topTwice(doc, "format") {
		return
	}
	var want history.History
	werr := json.Unmarshal(doc, &want)
	if werr == nil && want.Format > history.Format {
		werr = errors.New("a newer format")
	}
	if len(want.Ops) == 0 {
		want.Ops = nil
	}
	for _, size := range []int{1 + rng.IntN(64), 1 << 13} {
		got, gerr := readBytes(doc, size)
		if (werr == nil) != (gerr == nil) {
			t.Fatalf("%q (buffer %d): encoding/json says %v, the reader %v", doc, size, werr, gerr)
		}
		if werr == nil && !reflect.DeepEqual(got, &want) {
			t.Fatalf("%q (buffer %d):\nencoding/json %+v\nthe reader    %+v", doc, size, &want, got)
		}
	}
}

// topTwice says whether doc is an object with two members named name
// (in any case, as encoding/json matches them).
func topTwice(doc []byte, name string) bool {
	dec := json.NewDecoder(bytes.NewReader(doc))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return false
	}
	n := 0
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return false
		}
		if k, ok := t.(string); ok && strings.EqualFold(k, name) {
			n++
		}
		var skip json.RawMessage
		if dec.Decode(&skip) != nil {
			return false
		}
	}
	return n > 1
}

// node is a JSON value as read token by token: an object keeps its
// members in order, duplicates and all.
type node struct {
	delim byte // '{' or '['; 0 for a scalar
	raw   []byte
	names []string
	kids  []*node
}

func readNode(dec *json.Decoder) (*node, error) {
	t, err := dec.Token()
	if err != nil {
		return nil, err
	}
	d, ok := t.(json.Delim)
	if !ok {
		raw, err := json.Marshal(t) // a json.Number keeps its text
		return &node{raw: raw}, err
	}
	n := &node{delim: byte(d)}
	for dec.More() {
		if d == '{' {
			k, err := dec.Token()
			if err != nil {
				return nil, err
			}
			n.names = append(n.names, k.(string))
		}
		kid, err := readNode(dec)
		if err != nil {
			return nil, err
		}
		n.kids = append(n.kids, kid)
	}
	_, err = dec.Token()
	return n, err
}

// relayout writes the JSON document doc again with every object's
// members reversed (reverse) or shuffled, and whitespace drawn from rng
// between every two tokens.
func relayout(doc []byte, rng *rand.Rand, reverse bool) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.UseNumber()
	n, err := readNode(dec)
	if err != nil {
		return nil, err
	}
	var b []byte
	space := func() {
		b = append(b, [...]string{"", "", " ", "\n", "\t", "\r\n  "}[rng.IntN(6)]...)
	}
	var write func(n *node)
	write = func(n *node) {
		space()
		if n.delim == 0 {
			b = append(b, n.raw...)
			space()
			return
		}
		order := make([]int, len(n.kids))
		for i := range order {
			order[i] = i
		}
		if n.delim == '{' {
			if reverse {
				slices.Reverse(order)
			} else {
				rng.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
			}
		}
		b = append(b, n.delim)
		for j, i := range order {
			if j > 0 {
				b = append(b, ',')
			}
			if n.delim == '{' {
				space()
				name, _ := json.Marshal(n.names[i])
				b = append(b, name...)
				space()
				b = append(b, ':')
			}
			write(n.kids[i])
		}
		space()
		b = append(b, n.delim+2) // '{'+2 is '}', '['+2 is ']'
		space()
	}
	write(n)
	return b, nil
}
