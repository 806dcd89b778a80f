package history

import (
	"sync"
	"time"
)

// Recorder collects operations and faults from concurrent clients against
// one monotonic base, so that every time in the history is comparable.
type Recorder struct {
	start time.Time

	mu     sync.Mutex
	ops    []Op
	faults []Fault
	next   int
	// stream, when set, gets every operation and fault change as it is
	// recorded (StreamTo).
	stream *stream
	// streamed: the operations are in the stream, and ops is a ring of
	// the latest TailOps; total counts every operation recorded.
	streamed bool
	total    int
	// closed: the stream was closed, and the ring dropped with it.
	closed bool
	// inflight holds the call instant of each client's operation that
	// began (Begin) and is not recorded yet.
	inflight map[int]int64
}

// TailOps is how many of the latest operations a streaming recorder
// keeps in memory for those that watch the run (Since): eight seconds of
// operations at the fastest rate measured here (the live count takes
// them every five). The rest are only on disk, so a run's
// memory does not grow with its length, and the ring is allocated once.
const TailOps = 1 << 17

// NewRecorder starts the run's clock.
func NewRecorder() *Recorder {
	return &Recorder{start: time.Now()}
}

// Now is the time since the run's start on the monotonic clock.
func (r *Recorder) Now() int64 { return int64(time.Since(r.start)) }

// Begin is Now for the call of an operation of client, which stays in
// flight until Add records it: Settled then knows that part of the
// history may still change.
func (r *Recorder) Begin(client int) int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	now := r.Now()
	if r.inflight == nil {
		r.inflight = map[int]int64{}
	}
	r.inflight[client] = now
	return now
}

// Settled is the instant before which the history is complete: every
// operation begun (Begin) before it has been recorded. It is the call of
// the oldest operation in flight, or now. A release still in flight ends
// a hold the history shows open, so a watcher that judges what happened
// after Settled may see a double holder that is not one.
func (r *Recorder) Settled() int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	at := r.Now()
	for _, c := range r.inflight {
		at = min(at, c)
	}
	return at
}

// Abandon ends client's operation in flight (Begin) with nothing to
// record.
func (r *Recorder) Abandon(client int) {
	r.mu.Lock()
	delete(r.inflight, client)
	r.mu.Unlock()
}

// Started is the wall-clock instant of the run's start.
func (r *Recorder) Started() time.Time { return r.start }

// NewClient hands out a fresh client id: one per worker at start, and a new
// one after every operation with an unknown outcome.
func (r *Recorder) NewClient() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	id := r.next
	r.next++
	return id
}

// Add records a finished operation.
func (r *Recorder) Add(op Op) {
	r.mu.Lock()
	switch {
	case r.closed:
	case !r.streamed:
		r.ops = append(r.ops, op)
	case len(r.ops) < TailOps:
		r.ops = append(r.ops, op)
	default:
		r.ops[r.total%TailOps] = op
	}
	r.total++
	delete(r.inflight, op.Client)
	r.stream.writeOp(&op)
	r.mu.Unlock()
}

// FaultStart records the start of a fault window and returns its index for
// FaultEnd.
func (r *Recorder) FaultStart(name, target, detail string) int {
	now := r.Now()
	r.mu.Lock()
	defer r.mu.Unlock()
	r.faults = append(r.faults, Fault{Name: name, Target: target, Detail: detail, Start: now})
	r.streamFault(len(r.faults) - 1)
	return len(r.faults) - 1
}

// FaultEnd closes the fault window i.
func (r *Recorder) FaultEnd(i int) {
	now := r.Now()
	r.mu.Lock()
	defer r.mu.Unlock()
	if i >= 0 && i < len(r.faults) && r.faults[i].End == 0 {
		r.faults[i].End = now
		r.streamFault(i)
	}
}

// Len is the number of operations recorded so far.
func (r *Recorder) Len() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.total
}

// History returns a sorted copy of what was recorded, with meta attached and
// its duration set to now. A recorder that streamed (StreamTo) returns no
// operations: they are in the stream, which SaveStream turns into the
// history's file.
func (r *Recorder) History(meta Meta) *History {
	r.mu.Lock()
	h := &History{Meta: meta, Faults: append([]Fault(nil), r.faults...)}
	if !r.streamed {
		h.Ops = append([]Op(nil), r.ops...)
	}
	r.mu.Unlock()
	h.Meta.DurationNs = r.Now()
	if h.Meta.Started == "" {
		h.Meta.Started = r.start.UTC().Format(time.RFC3339Nano)
	}
	h.Sort()
	return h
}

// Faults returns the fault windows recorded so far.
func (r *Recorder) Faults() []Fault {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Fault(nil), r.faults...)
}

// Since returns the operations recorded after the first from, and the
// index to pass next time: faults watch the history to time themselves
// (kill the primary right after a lock write landed on it). A streaming
// recorder has only its latest TailOps: a watcher that fell further
// behind gets those.
func (r *Recorder) Since(from int) ([]Op, int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	from = max(from, r.total-len(r.ops)) // the oldest kept
	if from >= r.total {
		return nil, r.total
	}
	out := make([]Op, 0, r.total-from)
	for i := from; i < r.total; i++ {
		if r.streamed {
			out = append(out, r.ops[i%TailOps])
		} else {
			out = append(out, r.ops[i])
		}
	}
	return out, r.total
}

// FaultTarget names the target of the open fault window i once the fault
// has chosen it (a kill aims at whichever primary a lock landed on).
func (r *Recorder) FaultTarget(i int, target, detail string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if i >= 0 && i < len(r.faults) {
		r.faults[i].Target = target
		if detail != "" {
			r.faults[i].Detail = detail
		}
		r.streamFault(i)
	}
}

// FaultPromoted records, in fault window i, that node now serves as the
// key's primary.
func (r *Recorder) FaultPromoted(i int, node string) {
	now := r.Now()
	r.mu.Lock()
	defer r.mu.Unlock()
	if i >= 0 && i < len(r.faults) {
		r.faults[i].Promoted, r.faults[i].PromotedAt = node, now
		r.streamFault(i)
	}
}

// FaultUnmet records, in fault window i, why the fault could not make
// its moment.
func (r *Recorder) FaultUnmet(i int, why string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if i >= 0 && i < len(r.faults) {
		r.faults[i].Unmet = why
		r.streamFault(i)
	}
}

// FaultNodes records, in fault window i, the servers as the step it
// stands for left them.
func (r *Recorder) FaultNodes(i int, nodes []NodeState) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if i >= 0 && i < len(r.faults) {
		r.faults[i].Nodes = nodes
		r.streamFault(i)
	}
}

// streamFault writes fault i, whole, to the stream; r.mu is held.
func (r *Recorder) streamFault(i int) {
	f := r.faults[i]
	r.stream.write(StreamLine{Fault: &f, I: i})
}
