package history

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

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
	want, _ := json.Marshal(StreamLine{Op: &op})
	if len(lines) != 2 || lines[1] != string(want) {
		t.Fatalf("stream:\n%s\nwant its second line:\n%s", b, want)
	}
}
