package scenarios

import (
	"fmt"
	"sync"
	"time"

	"github.com/lockcheck/lockcheck/history"
)

// Resource is the thing the lock protects, kept in the harness so that
// what it saw is exact. Each holder writes to it while it believes it holds
// the lock, and every write goes into the history with times from the
// run's Recorder.
//
// Fenced, it accepts a write only with a fence strictly greater than the
// last one it accepted for that key, as the article's UPDATE ... WHERE
// last_fence < n does: a stale holder's write is rejected. Unfenced, a
// write is a read-modify-write of a counter per key with a gap between
// read and write, so two holders at once show up as lost increments
// (an op whose Read is not the Wrote of the write before it).
type Resource struct {
	rec    *history.Recorder
	fenced bool
	gap    time.Duration

	mu       sync.Mutex
	fences   map[string]int64
	counters map[string]int64
}

// Write is one write by a client that believes it holds Key.
type Write struct {
	Client, Worker int
	Key, Token     string
	Fence          int64
	HasFence       bool
}

// NewResource makes an empty resource; gap is the unfenced mode's pause
// between read and write.
func NewResource(rec *history.Recorder, fenced bool, gap time.Duration) *Resource {
	return &Resource{rec: rec, fenced: fenced, gap: gap, fences: map[string]int64{}, counters: map[string]int64{}}
}

// Fenced says which mode the resource is in.
func (r *Resource) Fenced() bool { return r.fenced }

// Write applies w, records it, and says whether it was accepted.
func (r *Resource) Write(w Write) bool {
	finish := r.Begin(w)
	if !r.fenced && r.gap > 0 {
		time.Sleep(r.gap)
	}
	return finish()
}

// Begin starts w and returns the function that finishes it, records it
// and says whether it was accepted. Unfenced, Begin reads the counter and
// finish writes it back plus one; fenced, finish checks and takes the
// fence. Write is Begin and finish with the resource's gap between them;
// a script calls them itself to freeze a holder mid-write.
func (r *Resource) Begin(w Write) (finish func() bool) {
	op := history.Op{Client: w.Client, Worker: w.Worker, Key: w.Key, Kind: history.Write, Token: w.Token,
		Fence: w.Fence, HasFence: w.HasFence, Call: r.rec.Now()}
	var read int64
	if !r.fenced {
		r.mu.Lock()
		read = r.counters[w.Key]
		r.mu.Unlock()
	}
	return func() bool {
		if r.fenced {
			r.fencedWrite(w, &op)
		} else {
			r.counterWrite(w.Key, read, &op)
		}
		op.Return = r.rec.Now()
		r.rec.Add(op)
		return op.Outcome == history.OK
	}
}

func (r *Resource) fencedWrite(w Write, op *history.Op) {
	r.mu.Lock()
	defer r.mu.Unlock()
	last, seen := r.fences[w.Key]
	switch {
	case !w.HasFence:
		op.Outcome, op.Error = history.Fail, "no fence"
	case seen && w.Fence <= last:
		op.Outcome, op.Error = history.Fail, fmt.Sprintf("stale fence %d: %d accepted before", w.Fence, last)
	default:
		r.fences[w.Key] = w.Fence
		op.Outcome = history.OK
	}
}

// counterWrite writes read+1, whatever was written since the read: the
// lock under test is the only thing meant to keep two writers apart.
func (r *Resource) counterWrite(key string, read int64, op *history.Op) {
	r.mu.Lock()
	r.counters[key] = read + 1
	r.mu.Unlock()
	op.Read, op.Wrote, op.Outcome = read, read+1, history.OK
}

// Counter is the unfenced mode's counter for key.
func (r *Resource) Counter(key string) int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.counters[key]
}

// LastFence is the last fence the fenced mode accepted for key.
func (r *Resource) LastFence(key string) (int64, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	f, ok := r.fences[key]
	return f, ok
}
