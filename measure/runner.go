package measure

import (
	"context"
	"fmt"
	"io"
	"slices"
	"sync"
	"time"
)

// Runner runs a plan's items, Workers at once.
type Runner struct {
	// Workers is how many lanes run at once (see Lanes).
	Workers int
	// Shard is the part of the plan this run makes (the whole when zero).
	Shard Shard
	// Log gets the progress lines.
	Log io.Writer
	// Unit is what a worker runs, for the machine's description: "runs",
	// "topologies".
	Unit string
}

// Result is one item's measured value.
type Result[R any] struct {
	// Index is the item's place in the whole plan.
	Index int
	Key   string
	Value R
}

// Snapshot is the measurement as it stands: the results so far in plan
// order, and when, how long and on what they were measured.
type Snapshot[R any] struct {
	Results []Result[R]
	Started time.Time
	Elapsed time.Duration
	Machine string
	// Complete says every item of the shard was measured: not
	// interrupted, no lane failed.
	Complete bool
	// Part is the shard's place in the plan, for the table's file.
	Part Part
}

// Lane is what an item's function knows of where it runs.
type Lane struct {
	// Worker is which of the runner's workers (0..Lanes-1) runs the lane.
	Worker int
	// Key is the lane's (the item's when the plan has no lanes).
	Key string
	// Index is the item's place among the shard's items (from 0), Of
	// their number.
	Index, Of int
	// Value is the lane's to keep between its items (a topology it
	// started); OnClose releases it.
	Value   any
	closers []func() error
	run     *run
}

// Logf writes one line to the runner's log, never in the middle of
// another's.
func (l *Lane) Logf(format string, args ...any) {
	l.run.mu.Lock()
	defer l.run.mu.Unlock()
	fmt.Fprintf(l.run.log, format+"\n", args...)
}

// Step counts one progress step done and returns the count so far and
// the shard's total.
func (l *Lane) Step() (done, total int) {
	l.run.mu.Lock()
	defer l.run.mu.Unlock()
	l.run.done++
	return l.run.done, l.run.total
}

// Progress counts one step and logs it: "[done/total] line".
func (l *Lane) Progress(line string) {
	l.run.mu.Lock()
	defer l.run.mu.Unlock()
	l.run.done++
	fmt.Fprintf(l.run.log, "[%d/%d] %s\n", l.run.done, l.run.total, line)
}

// OnClose runs f once the lane's last item is done (a topology's
// teardown); its error fails the measurement.
func (l *Lane) OnClose(f func() error) { l.closers = append(l.closers, f) }

// run is one Run's shared state, under mu.
type run struct {
	mu          sync.Mutex
	log         io.Writer
	done, total int
	results     []Result[any]
	err         error
	// order is each plan index's place among the shard's items: set
	// before the workers start, read only after.
	order map[int]int
}

// Run measures the shard's items with do, Workers lanes at once, and
// calls save with the snapshot after each item and once at the end, under
// one lock (save writes the table's files). An item whose do returns an
// error while ctx has ended was cut short: it is not a figure, and is
// left out. Any other error ends its lane (the lane's later items are
// not run) and is returned after the other lanes finish. No item starts
// after ctx ends. The snapshot returned is the last one saved.
func Run[T, R any](ctx context.Context, r Runner, p Plan[T], do func(context.Context, *Lane, T) (R, error), save func(*Snapshot[R]) error) (*Snapshot[R], error) {
	return Resume(ctx, r, p, nil, do, save)
}

// Resume is Run after an interrupted measurement of the same plan and
// shard: the items done holds (see Done) are taken as measured, not run
// again, and the rest are run as Run runs them. A session cut short, or a
// measurement stopped because a run would not end, goes on from where
// it stopped instead of from the start.
func Resume[T, R any](ctx context.Context, r Runner, p Plan[T], done *Done[R], do func(context.Context, *Lane, T) (R, error), save func(*Snapshot[R]) error) (*Snapshot[R], error) {
	if r.Log == nil {
		r.Log = io.Discard
	}
	all := p.lanes(r.Shard)
	of := 0
	for _, l := range all {
		of += len(l.items)
	}
	lanes, carried, err := left(done, p, r.Shard, all)
	if err != nil {
		return nil, err
	}
	workers := lanesAtOnce(r.Workers, p.Lane != nil, len(lanes))
	st := &run{log: r.Log, total: p.steps(r.Shard), order: map[int]int{}, results: carried}
	for _, c := range carried {
		st.done += p.stepsOf(p.Items[c.Index])
	}
	snap := &Snapshot[R]{Started: time.Now(), Part: partOf(r.Shard, p)}
	if len(carried) > 0 {
		fmt.Fprintf(r.Log, "resumed: %d of %d taken as measured, %d to run\n", len(carried), of, of-len(carried))
	}
	load := LoadAverage()
	record := func() error { // under st.mu
		snap.Results = snap.Results[:0]
		slices.SortFunc(st.results, func(a, b Result[any]) int { return a.Index - b.Index })
		for _, res := range st.results {
			snap.Results = append(snap.Results, Result[R]{Index: res.Index, Key: res.Key, Value: res.Value.(R)})
		}
		snap.Elapsed = time.Since(snap.Started)
		snap.Machine = Machine(workers, r.Unit, load)
		if len(carried) > 0 {
			snap.Machine += fmt.Sprintf("; resumed, %d of %d measured by the earlier measurement", len(carried), of)
		}
		return save(snap)
	}
	for _, l := range all {
		for _, i := range l.items {
			st.order[i] = len(st.order)
		}
	}
	next := make(chan lane, len(lanes))
	for _, l := range lanes {
		next <- l
	}
	close(next)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for l := range next {
				runLane(ctx, st, &Lane{Worker: w, Key: l.key, Of: of, run: st}, l, p, do, record)
			}
		})
	}
	wg.Wait()
	st.mu.Lock()
	defer st.mu.Unlock()
	snap.Complete = ctx.Err() == nil && st.err == nil && len(st.results) == of
	if err := record(); err != nil && st.err == nil {
		st.err = err
	}
	return snap, st.err
}

// runLane measures one lane's items in order, recording each, and
// releases what the lane kept.
func runLane[T, R any](ctx context.Context, st *run, ln *Lane, l lane, p Plan[T], do func(context.Context, *Lane, T) (R, error), record func() error) {
	fail := func(err error) {
		st.mu.Lock()
		defer st.mu.Unlock()
		if st.err == nil {
			st.err = err
		}
	}
	defer func() {
		for _, c := range slices.Backward(ln.closers) {
			if err := c(); err != nil {
				fail(err)
			}
		}
	}()
	for _, i := range l.items {
		if ctx.Err() != nil {
			return
		}
		ln.Index = st.order[i]
		v, err := do(ctx, ln, p.Items[i])
		if err != nil {
			if ctx.Err() == nil {
				fail(err)
			}
			return
		}
		st.mu.Lock()
		st.results = append(st.results, Result[any]{Index: i, Key: p.Key(p.Items[i]), Value: v})
		if err := record(); err != nil && st.err == nil {
			st.err = err
		}
		st.mu.Unlock()
	}
}
