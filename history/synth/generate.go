// Package synth generates legal histories of a simulated correct server:
// the load of the checker's benchmarks and of bench/, and the long
// histories tests need. It is not part of the checker's API, and it
// imports only history, so any package's tests can use it.
package synth

import (
	"container/heap"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/lockcheck/lockcheck/history"
)

// TTL is the lease the generated clients ask for.
const TTL = 500 * time.Millisecond

// Generate returns a legal history of about ops operations: clients
// workers (at least one per key, spread evenly over keys) run the article's
// fenced lock against a simulated correct server: acquire with a fence drawn
// in the same transaction, one fenced write to the resource, extends, then
// release. Now and then a client stalls past its lease (the lease expires,
// another client takes the lock, the stalled one sees a nil extend or a 0
// release) or loses a reply (an unknown outcome; the command took effect or
// not, at random). The same seed gives the same history. The checker must
// find nothing wrong in it; benchmarks and the project's benchmark tooling
// use it as the load.
func Generate(seed int64, ops, keys, clients int) *history.History {
	keys = max(1, keys)
	clients = max(clients, keys)
	h := &history.History{Meta: history.Meta{
		Server: "simulated", Topology: "standalone", Client: "generated", Seed: seed,
		TTLms: TTL.Milliseconds(), Clients: clients, Keys: keys, Fenced: true,
	}}
	nextClient := clients
	for k := range keys {
		workers := clients / keys
		if k < clients%keys {
			workers++
		}
		share := ops / keys
		if k < ops%keys {
			share++
		}
		first := k
		sim := &simKey{
			rng: rand.New(rand.NewPCG(uint64(seed), uint64(k))), key: fmt.Sprintf("lock:{k%d}", k),
			nextClient: &nextClient,
		}
		for w := range workers {
			id := first + w*keys
			sim.workers = append(sim.workers, &simWorker{worker: id, client: id})
		}
		h.Ops = append(h.Ops, sim.run(share)...)
	}
	h.Sort()
	h.Meta.DurationNs = h.End()
	return h
}

// simKey simulates one key: its server state, its resource and the workers
// contending for it. Events run in time order so that the server applies
// commands in the order they reach it.
type simKey struct {
	rng        *rand.Rand
	key        string
	nextClient *int
	workers    []*simWorker
	events     eventHeap
	ops        []history.Op

	holder   string
	deadline int64 // the key is gone at instants after deadline
	counter  int64
	accepted int64 // the resource's last accepted fence
	tokens   int
	seq      int
}

type simWorker struct {
	worker, client int
	// the hold as the client sees it
	token    string
	fence    int64
	leaseEnd int64
	wrote    bool
	extends  int
	// the operation in flight
	op      history.Op
	lostRep bool // the reply will be lost: unknown outcome
	applied bool
}

type event struct {
	at    int64
	seq   int
	w     *simWorker
	phase int // 0 call, 1 reaches the server, 2 reply
}

type eventHeap []event

func (h eventHeap) Len() int { return len(h) }
func (h eventHeap) Less(i, j int) bool {
	if h[i].at != h[j].at {
		return h[i].at < h[j].at
	}
	return h[i].seq < h[j].seq
}
func (h eventHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *eventHeap) Push(x any)   { *h = append(*h, x.(event)) }
func (h *eventHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

const (
	simTTL     = int64(TTL)
	simTimeout = int64(50 * time.Millisecond)
)

func (s *simKey) between(lo, hi time.Duration) int64 {
	return int64(lo) + s.rng.Int64N(int64(hi-lo)+1)
}

func (s *simKey) push(at int64, w *simWorker, phase int) {
	s.seq++
	heap.Push(&s.events, event{at: at, seq: s.seq, w: w, phase: phase})
}

func (s *simKey) run(n int) []history.Op {
	for _, w := range s.workers {
		s.push(s.between(0, 2*time.Millisecond), w, 0)
	}
	started := 0
	for s.events.Len() > 0 {
		e := heap.Pop(&s.events).(event)
		switch e.phase {
		case 0:
			if started >= n {
				continue
			}
			started++
			s.call(e.w, e.at)
		case 1:
			s.apply(e.w, e.at)
		case 2:
			s.reply(e.w, e.at)
		}
	}
	return s.ops
}

// call picks the worker's next operation the way a correct client does.
func (s *simKey) call(w *simWorker, t int64) {
	op := history.Op{Client: w.client, Worker: w.worker, Key: s.key, Call: t}
	switch {
	case w.token == "":
		s.tokens++
		op.Kind, op.Token, op.TTLms = history.Acquire, fmt.Sprintf("t%d-%d", w.worker, s.tokens), TTL.Milliseconds()
	case t >= w.leaseEnd:
		op.Kind, op.Token = history.Release, w.token // late: it will likely answer 0
	case !w.wrote:
		op.Kind, op.Token, op.Fence, op.HasFence = history.Write, w.token, w.fence, true
	case w.extends > 0:
		op.Kind, op.Token, op.TTLms = history.Extend, w.token, TTL.Milliseconds()
	default:
		op.Kind, op.Token = history.Release, w.token
	}
	w.op = op
	w.lostRep = op.Kind != history.Write && s.rng.IntN(1000) == 0
	w.applied = !w.lostRep || s.rng.IntN(2) == 0
	if w.applied {
		s.push(t+s.between(20*time.Microsecond, 300*time.Microsecond), w, 1)
	} else {
		s.push(t+simTimeout, w, 2)
	}
}

// apply runs the command on the server (or the resource) when it arrives.
func (s *simKey) apply(w *simWorker, t int64) {
	op := &w.op
	if s.holder != "" && t > s.deadline {
		s.holder = ""
	}
	ok := false
	switch op.Kind {
	case history.Acquire:
		s.counter++
		if s.holder == "" {
			s.holder, s.deadline, ok = op.Token, t+simTTL, true
			op.Fence, op.HasFence = s.counter, true
		}
	case history.Extend:
		if s.holder == op.Token {
			s.deadline, ok = t+simTTL, true
		}
	case history.Release:
		if s.holder == op.Token {
			s.holder, ok = "", true
		}
	case history.Write:
		if op.Fence > s.accepted {
			s.accepted, ok = op.Fence, true
		}
	}
	op.Outcome = history.Fail
	if ok {
		op.Outcome = history.OK
	}
	at := t + s.between(20*time.Microsecond, 300*time.Microsecond)
	if w.lostRep {
		at = op.Call + simTimeout
	}
	s.push(at, w, 2)
}

// reply records the operation and schedules the worker's next call.
func (s *simKey) reply(w *simWorker, t int64) {
	op := w.op
	op.Return = t
	if w.lostRep {
		op.Outcome, op.Error = history.Unknown, "i/o timeout"
		if op.Kind == history.Acquire {
			op.Fence, op.HasFence = 0, false
		}
	}
	s.ops = append(s.ops, op)
	think := s.between(200*time.Microsecond, 3*time.Millisecond)
	switch {
	case w.lostRep:
		// the client cannot know: it gives the hold up and goes on
		// under a new client id
		w.token = ""
		w.client = *s.nextClient
		*s.nextClient++
	case op.Kind == history.Acquire && op.Outcome == history.OK:
		w.token, w.fence, w.wrote = op.Token, op.Fence, false
		w.leaseEnd = op.Call + simTTL
		w.extends = s.rng.IntN(3)
		think = s.holdThink()
	case op.Kind == history.Acquire:
		w.token = ""
	case op.Kind == history.Write:
		w.wrote = true
		think = s.holdThink()
	case op.Kind == history.Extend && op.Outcome == history.OK:
		w.leaseEnd = op.Call + simTTL
		w.extends--
		think = s.holdThink()
	case op.Kind == history.Extend:
		w.token = "" // nil: stop working, do not release
	case op.Kind == history.Release:
		w.token = ""
		think = s.between(500*time.Microsecond, 5*time.Millisecond)
	}
	s.push(t+think, w, 0)
}

// holdThink is the work between two steps of a hold; now and then the
// client stalls past its lease.
func (s *simKey) holdThink() int64 {
	if s.rng.IntN(100) < 2 {
		return simTTL + s.between(0, TTL/2)
	}
	return s.between(100*time.Microsecond, 20*time.Millisecond)
}
