package checker

import (
	"context"
	"fmt"
	"io"
	"os"
	"runtime"

	"github.com/lockcheck/lockcheck/history"
	"github.com/lockcheck/lockcheck/history/historyjson"
)

// GroupOps is how many operations RunFile holds at once, give or take
// a segment: keys are independent locks, so a long history is checked a
// group of keys at a time, and a key longer than that a chunk of its
// operations at a time (groupCheck, keyCarry).
const GroupOps = 1 << 17

// groupOps is GroupOps; tests make it small.
var groupOps = GroupOps

// RunFile checks the history saved at path (history.json) in the memory
// of GroupOps operations rather than of the whole history: a first pass
// reads the file (in any JSON layout: historyjson.Reader), learns what the
// checks need of the whole (its end, whether it has fences, workers,
// counter writes, each key's longest lease) and spills each operation to
// a temporary file of its key's group; each group is then read back in
// call order and checked, a key that grows past GroupOps a chunk at a
// time, and the results merged. A history of no more than GroupOps
// operations is simply loaded and checked.
//
// The options are OptionsFor the history, then adjust's (nil: none). It
// returns the result and the history: whole when it was loaded, else its
// head only (meta, faults, scenario; no operations).
func RunFile(ctx context.Context, path string, adjust func(*Options)) (*Result, *history.History, error) {
	r, err := historyjson.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer r.Close()
	// The first GroupOps operations are kept: a history no longer is
	// checked whole, in memory. The file's layout does not matter; its
	// operations are counted, not its lines.
	ops, err := r.ReadOps(nil, groupOps+1)
	if err == io.EOF {
		return runLoaded(ctx, r, ops, adjust)
	}
	if err != nil {
		return nil, nil, err
	}
	dir, err := os.MkdirTemp("", "lockcheck-check-")
	if err != nil {
		return nil, nil, fmt.Errorf("check %s: %w", path, err)
	}
	defer os.RemoveAll(dir)
	// groups of about GroupOps operations each, from the operations the
	// file holds as the first ones' bytes tell
	groups := max(2, (r.Estimate()+groupOps-1)/groupOps)
	sp := &spill{dir: dir, groups: groups, group: map[string]int{}, maxTTL: map[string]int64{}}
	sum, fenced, err := spillAll(r, ops, sp)
	if err != nil {
		return nil, nil, err
	}
	head := r.Head()
	sum.end = max(sum.end, head.End())
	opts := optionsFor(head.Meta.Fenced || fenced, head.Meta.Topology)
	if adjust != nil {
		adjust(&opts)
	}
	if opts, err = opts.ready(); err != nil {
		return nil, nil, err
	}
	res, err := checkGroups(ctx, path, sp, sum, head, opts)
	if err != nil {
		return nil, nil, err
	}
	return res, head, nil
}

// runLoaded checks a history short enough to be held whole: ops are all
// its operations, and r has read the rest.
func runLoaded(ctx context.Context, r *historyjson.Reader, ops []history.Op, adjust func(*Options)) (*Result, *history.History, error) {
	h := r.Head()
	if len(ops) > 0 {
		h.Ops = ops
	}
	opts := OptionsFor(h)
	if adjust != nil {
		adjust(&opts)
	}
	res, err := Run(ctx, h, opts)
	return res, h, err
}

// spillAll is RunFile's first pass: it validates and summarises every
// operation, ops (those read already) and then the rest of r, and spills
// each to its group's file. fenced says an acquire drew a fence.
func spillAll(r *historyjson.Reader, ops []history.Op, sp *spill) (sum summary, fenced bool, err error) {
	add := func(i int, op *history.Op) error {
		if err := validateOp(i, op); err != nil {
			return err
		}
		sum.add(op)
		fenced = fenced || op.Kind == history.Acquire && op.Outcome == history.OK && op.HasFence
		return sp.write(int32(i), op)
	}
	for i := range ops {
		if err = add(i, &ops[i]); err != nil {
			break
		}
	}
	ops = nil // spilled: not held while the rest is read
	var op history.Op
	for err == nil {
		if err = r.Next(&op); err == nil {
			err = add(r.Index(), &op)
		}
	}
	if err == io.EOF {
		err = nil
	}
	if cerr := sp.close(); err == nil {
		err = cerr
	}
	if err != nil {
		return sum, false, fmt.Errorf("check history: %w", err)
	}
	if sum.ops == 0 {
		return sum, false, fmt.Errorf("check history: history has no operations: nothing was recorded")
	}
	return sum, fenced, nil
}

// checkGroups checks the spilled groups one after the other and merges
// their results into the history's.
func checkGroups(ctx context.Context, path string, sp *spill, sum summary, head *history.History, opts Options) (*Result, error) {
	shown := &shownSpill{dir: sp.dir, keys: map[string]*keyShown{}}
	defer shown.close()
	var all *part
	for g := range sp.groups {
		gc := &groupCheck{ctx: ctx, opts: opts, sum: sum, head: head, limit: groupOps, maxTTL: sp.maxTTL,
			carries: map[string]*keyCarry{}, acc: map[string]*keyAcc{}, shown: shown}
		if err := checkGroup(sp, g, gc); err != nil {
			return nil, fmt.Errorf("check history: %w", err)
		}
		opts.failingPictureOnly = gc.opts.failingPictureOnly
		if gc.all == nil {
			continue
		}
		if all == nil {
			all = gc.all
		} else {
			all.merge(gc.all)
		}
		// The group's operations are garbage now: collected before the
		// next group is read, the heap does not grow to twice a group's
		// size (the collector's own pace) between groups.
		gc = nil
		runtime.GC()
	}
	opts.failingPictureOnly = false
	all.keys = len(sp.group)
	if err := shown.into(all); err != nil {
		return nil, fmt.Errorf("check history: %w", err)
	}
	res := all.result(opts, sum)
	if err := resolveRefs(path, res); err != nil {
		return nil, fmt.Errorf("check history: %w", err)
	}
	res.judgeFaults(head, sum.end)
	explainAll(res, head.Faults)
	return res, nil
}

// checkGroup reads group g back in call order into gc and finishes it.
func checkGroup(sp *spill, g int, gc *groupCheck) error {
	order := &callOrder{disorder: sp.disorder[g]}
	pos := 0
	var p pending
	err := sp.read(g, func(op *history.Op, i int32) {
		p.op, p.idx, p.pos = *op, i, pos
		order.push(&p, gc.add)
		pos++
	})
	if err != nil {
		return err
	}
	order.flush(gc.add)
	gc.finish()
	return nil
}

// renumber turns the operation indices of a group's findings and holds
// into the whole history's.
func (p *part) renumber(idx []int32) {
	hold := func(hd *Hold) { renumberHold(hd, idx) }
	list := func(fs *findings) {
		for i := range fs.list {
			f := &fs.list[i]
			for j := range f.Ops {
				f.Ops[j].Index = renumbered(f.Ops[j].Index, idx)
			}
			for j := range f.Holds {
				hold(&f.Holds[j])
			}
		}
	}
	for i := range p.found {
		list(&p.found[i])
	}
	for i := range p.holds {
		hold(&p.holds[i])
	}
}

// renumbered is a chunk's operation index i in the whole history; a
// negative one is global already (globalIndex).
func renumbered(i int, idx []int32) int {
	if i < 0 {
		return -i - 1
	}
	return int(idx[i])
}

// renumberHold turns a hold's operation indices into the whole history's.
func renumberHold(hd *Hold, idx []int32) {
	hd.Acquire = renumbered(hd.Acquire, idx)
	if hd.Extend != 0 {
		hd.Extend = renumbered(hd.Extend, idx)
	}
}
