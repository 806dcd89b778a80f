package history

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// TestStreamRebuildsWhatWasRecorded: the stream holds every operation and
// the last state of every fault window; a last line cut short by a kill
// is dropped, and the rebuilt history is marked partial.
func TestStreamRebuildsWhatWasRecorded(t *testing.T) {
	path := filepath.Join(t.TempDir(), StreamName)
	r := NewRecorder()
	meta := Meta{Server: "valkey-9.1", Client: "native", Seed: 7, Keys: 1}
	if err := r.StreamTo(path, meta); err != nil {
		t.Fatal(err)
	}
	ops := []Op{
		{Client: 0, Worker: 0, Key: "k", Kind: Acquire, Token: "a", Outcome: OK, Call: 10, Return: 20},
		{Client: 1, Worker: 1, Key: "k", Kind: Acquire, Token: "b", Outcome: Fail, Call: 5, Return: 30},
	}
	r.Add(ops[0])
	w := r.FaultStart("kill-primary", "", "")
	r.FaultTarget(w, "n1", "killed")
	r.Add(ops[1])
	r.FaultEnd(w)
	if err := r.CloseStream(); err != nil {
		t.Fatal(err)
	}
	want := r.History(meta)
	if want.Ops != nil {
		t.Fatalf("a streaming recorder's history has %d operations in memory, want none (they are in the stream)", len(want.Ops))
	}
	want.Ops = []Op{ops[1], ops[0]} // LoadStream sorts by call

	// The history's file made from the stream holds the operations in
	// the order they returned, and the head.
	saved := filepath.Join(t.TempDir(), "history.json")
	want.Scenario = []byte(`{"seed":7}`)
	if n, err := SaveStream(path, saved, want); err != nil || n != 2 {
		t.Fatalf("SaveStream: %d ops, %v", n, err)
	}
	back, err := Load(saved)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back.Ops, ops) || !reflect.DeepEqual(back.Faults, want.Faults) || !reflect.DeepEqual(back.Meta, want.Meta) || string(back.Scenario) != `{"seed":7}` {
		t.Fatalf("history.json from the stream: %+v, want ops %+v and the head %+v", back, ops, want)
	}

	got, err := LoadStream(path)
	if err != nil {
		t.Fatal(err)
	}
	if !got.Meta.Partial || got.Meta.Server != "valkey-9.1" || got.Meta.Seed != 7 {
		t.Fatalf("meta %+v", got.Meta)
	}
	if !reflect.DeepEqual(got.Ops, want.Ops) || !reflect.DeepEqual(got.Faults, want.Faults) {
		t.Fatalf("rebuilt ops %+v faults %+v, want %+v %+v", got.Ops, got.Faults, want.Ops, want.Faults)
	}

	// A kill in the middle of a line.
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"op":{"client":2,"key":"k","kind":"rel`)
	f.Close()
	cut, err := LoadStream(path)
	if err != nil {
		t.Fatalf("a cut-off last line: %v", err)
	}
	if len(cut.Ops) != 2 {
		t.Fatalf("%d ops after a cut-off line, want 2", len(cut.Ops))
	}
	// A bad line in the middle is an error, not a cut.
	f, _ = os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString("\n{\"op\":{\"key\":\"k\"}}\n")
	f.Close()
	if _, err := LoadStream(path); err == nil {
		t.Fatal("a broken line followed by more lines loaded without an error")
	}
}

// TestStreamingRecorderKeepsATail: a recorder that streams keeps only its
// latest operations in memory, counts them all, and hands a watcher that
// keeps up every operation once.
func TestStreamingRecorderKeepsATail(t *testing.T) {
	r := NewRecorder()
	if err := r.StreamTo(filepath.Join(t.TempDir(), StreamName), Meta{}); err != nil {
		t.Fatal(err)
	}
	defer r.CloseStream()
	n := 3*TailOps + 5
	seen, from := 0, 0
	for i := range n {
		r.Add(Op{Key: "k", Kind: Acquire, Outcome: OK, Call: int64(i), Return: int64(i)})
		if i%1000 == 0 {
			var ops []Op
			ops, from = r.Since(from)
			for _, op := range ops {
				if op.Call != int64(seen) {
					t.Fatalf("watcher got op %d, want %d", op.Call, seen)
				}
				seen++
			}
		}
	}
	if r.Len() != n {
		t.Fatalf("Len %d, want %d", r.Len(), n)
	}
	r.mu.Lock()
	kept := len(r.ops)
	r.mu.Unlock()
	if kept != TailOps {
		t.Fatalf("%d operations in memory, want %d", kept, TailOps)
	}
	ops, _ := r.Since(0)
	if len(ops) != kept || ops[len(ops)-1].Call != int64(n-1) {
		t.Fatalf("Since(0) gave %d ops ending at %d; want the %d kept, ending at %d", len(ops), ops[len(ops)-1].Call, kept, n-1)
	}
}

// TestStreamOpLine: an operation's line in the stream is the line
// encoding/json writes for it.
func TestStreamOpLine(t *testing.T) {
	path := filepath.Join(t.TempDir(), StreamName)
	rec := NewRecorder()
	if err := rec.StreamTo(path, Meta{}); err != nil {
		t.Fatal(err)
	}
	op := Op{Client: 1, Key: "lock:{k}", Kind: Extend, Token: "a<b", TTLms: 300, Outcome: Unknown, Error: "no reply", Call: 7, Return: 9}
	rec.Add(op)
	if err := rec.CloseStream(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	want, _ := json.Marshal(streamLine{Op: &op})
	if len(lines) != 2 || lines[1] != string(want) {
		t.Fatalf("stream:\n%s\nwant its second line:\n%s", b, want)
	}
}
