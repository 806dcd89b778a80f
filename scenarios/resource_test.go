package scenarios

import (
	"testing"

	"github.com/lockcheck/lockcheck/history"
)

func TestResourceFenced(t *testing.T) {
	rec := history.NewRecorder()
	r := NewResource(rec, true, 0)
	w := func(fence int64, has bool) bool {
		return r.Write(Write{Client: 1, Key: "lock:{k1}", Token: "t", Fence: fence, HasFence: has})
	}
	if !w(0, true) || !w(5, true) {
		t.Fatal("rising fences rejected")
	}
	if w(5, true) || w(3, true) || w(9, false) {
		t.Fatal("a fence not above the last accepted one, or none, was accepted")
	}
	if !w(6, true) {
		t.Fatal("fence 6 after 5 rejected")
	}
	if f, _ := r.LastFence("lock:{k1}"); f != 6 {
		t.Fatalf("last fence %d, want 6", f)
	}
	h := rec.History(history.Meta{})
	var got []history.Outcome
	for _, op := range h.Ops {
		if op.Kind != history.Write || !(op.Return >= op.Call) {
			t.Fatalf("bad write op %+v", op)
		}
		got = append(got, op.Outcome)
	}
	want := []history.Outcome{"ok", "ok", "fail", "fail", "fail", "ok"}
	if len(got) != len(want) {
		t.Fatalf("outcomes %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("outcomes %v, want %v", got, want)
		}
	}
}

// TestResourceLostIncrement shows two overlapping writers losing one
// increment, which is how an unfenced run exposes a double holder. The
// overlap is scripted: both read before either writes.
func TestResourceLostIncrement(t *testing.T) {
	rec := history.NewRecorder()
	r := NewResource(rec, false, 0)
	first := r.Begin(Write{Client: 0, Worker: 0, Key: "lock:{k1}"})
	second := r.Begin(Write{Client: 1, Worker: 1, Key: "lock:{k1}"})
	first()
	second()
	if got := r.Counter("lock:{k1}"); got != 1 {
		t.Fatalf("counter %d after two overlapping writes, want 1 (one increment lost)", got)
	}
	h := rec.History(history.Meta{})
	if len(h.Ops) != 2 || h.Ops[0].Read != 0 || h.Ops[1].Read != 0 || h.Ops[0].Wrote != 1 || h.Ops[1].Wrote != 1 {
		t.Fatalf("ops %+v: both should read 0 and write 1", h.Ops)
	}
	r.Write(Write{Key: "lock:{k1}"})
	if got := r.Counter("lock:{k1}"); got != 2 {
		t.Fatalf("counter %d after a lone write, want 2", got)
	}
}
