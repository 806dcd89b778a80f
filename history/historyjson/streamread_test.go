package historyjson

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/lockcheck/lockcheck/history"
)

// TestStreamRebuildsWhatWasRecorded: the stream holds every operation and
// the last state of every fault window; a last line cut short by a kill
// is dropped, and the rebuilt history is marked partial.
func TestStreamRebuildsWhatWasRecorded(t *testing.T) {
	path := filepath.Join(t.TempDir(), history.StreamName)
	r := history.NewRecorder()
	meta := history.Meta{Server: "valkey-9.1", Client: "native", Seed: 7, Keys: 1}
	if err := r.StreamTo(path, meta); err != nil {
		t.Fatal(err)
	}
	ops := []history.Op{
		{Client: 0, Worker: 0, Key: "k", Kind: history.Acquire, Token: "a", Outcome: history.OK, Call: 10, Return: 20},
		{Client: 1, Worker: 1, Key: "k", Kind: history.Acquire, Token: "b", Outcome: history.Fail, Call: 5, Return: 30},
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
	want.Ops = []history.Op{ops[1], ops[0]} // LoadStream sorts by call

	// The history's file made from the stream holds the operations in
	// the order they returned, and the head.
	saved := filepath.Join(t.TempDir(), "history.json")
	want.Scenario = []byte(`{"seed":7}`)
	if n, err := history.SaveStream(path, saved, want); err != nil || n != 2 {
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
