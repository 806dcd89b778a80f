package checker

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"

	"github.com/lockcheck/lockcheck/history"
)

// GroupOps is how many operations RunFile holds at once, give or take a
// key: keys are independent locks, so a long history is checked a group
// of keys at a time.
const GroupOps = 1 << 18

// groupOps is GroupOps; tests make it small.
var groupOps = GroupOps

// RunFile checks the history saved at path (history.json) with the
// memory of a group of keys rather than of the whole history: a first
// pass reads the file, learns what the checks need of the whole (its end,
// whether it has fences, workers, counter writes) and spills each
// operation to a temporary file of its key's group; each group is then
// read back and checked in turn, and the results merged. A history of no
// more than GroupOps operations is simply loaded and checked.
//
// The options are OptionsFor the history, then adjust's (nil: none). It
// returns the result and the history: whole when it was loaded, else its
// head only (meta, faults, scenario; no operations).
func RunFile(ctx context.Context, path string, adjust func(*Options)) (*Result, *history.History, error) {
	lines, err := history.CountLines(path)
	if err != nil {
		return nil, nil, err
	}
	if lines <= groupOps+4 {
		h, err := history.Load(path)
		if err != nil {
			return nil, nil, err
		}
		opts := OptionsFor(h)
		if adjust != nil {
			adjust(&opts)
		}
		res, err := Run(ctx, h, opts)
		return res, h, err
	}
	dir, err := os.MkdirTemp("", "lockcheck-check-")
	if err != nil {
		return nil, nil, fmt.Errorf("check %s: %w", path, err)
	}
	defer os.RemoveAll(dir)
	sp := spill{dir: dir, groups: max(2, (lines+groupOps-1)/groupOps), group: map[string]int{}}
	var head *history.History
	var sum summary
	drawsFences := false
	err = history.Scan(path, func(h *history.History) error {
		head = h
		return nil
	}, func(i int, op *history.Op) error {
		if err := validateOp(i, op); err != nil {
			return err
		}
		sum.add(op)
		drawsFences = drawsFences || op.Kind == history.Acquire && op.Outcome == history.OK && op.HasFence
		return sp.write(int32(i), op)
	})
	if cerr := sp.close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, nil, fmt.Errorf("check history: %w", err)
	}
	if sum.ops == 0 {
		return nil, nil, fmt.Errorf("check history: history has no operations: nothing was recorded")
	}
	sum.end = max(sum.end, head.End())
	opts := optionsFor(head.Meta.Fenced || drawsFences)
	if adjust != nil {
		adjust(&opts)
	}
	if opts, err = opts.ready(); err != nil {
		return nil, nil, err
	}
	var all *part
	for g := range sp.groups {
		sub := &history.History{Meta: head.Meta, Faults: head.Faults}
		idx, err := sp.read(g, sub)
		if err != nil {
			return nil, nil, fmt.Errorf("check history: %w", err)
		}
		if len(sub.Ops) == 0 {
			continue
		}
		p := checkPart(ctx, sub, opts, sum)
		p.renumber(idx)
		// the picture of a history that passes is its first segments'
		opts.failingPictureOnly = opts.failingPictureOnly || p.lin.pic != nil
		if all == nil {
			all = p
		} else {
			all.merge(p)
		}
		// The group's operations are garbage now: collected before the
		// next group is read, the heap does not grow to twice a group's
		// size (the collector's own pace) between groups.
		sub, idx = nil, nil
		runtime.GC()
	}
	opts.failingPictureOnly = false
	return all.result(opts, sum), head, nil
}

// renumber turns the operation indices of a group's findings and holds
// into the whole history's.
func (p *part) renumber(idx []int32) {
	hold := func(hd *Hold) {
		hd.Acquire = int(idx[hd.Acquire])
		if hd.Extend != 0 {
			hd.Extend = int(idx[hd.Extend])
		}
	}
	list := func(fs *findings) {
		for i := range fs.list {
			f := &fs.list[i]
			for j := range f.Ops {
				f.Ops[j].Index = int(idx[f.Ops[j].Index])
			}
			for j := range f.Holds {
				hold(&f.Holds[j])
			}
		}
	}
	for i := range p.found {
		list(&p.found[i])
	}
	list(&p.lin.found)
	for i := range p.holds {
		hold(&p.holds[i])
	}
}

// spill writes operations to one temporary file per group of keys, a key
// going to the group after the last one's on first sight, so that groups
// get keys in turn.
type spill struct {
	dir    string
	groups int
	group  map[string]int
	count  []int // operations per group
	files  []*os.File
	w      []*bufio.Writer
	buf    []byte
}

func (s *spill) path(g int) string { return filepath.Join(s.dir, fmt.Sprintf("group-%d", g)) }

func (s *spill) write(i int32, op *history.Op) error {
	if s.files == nil {
		for g := range s.groups {
			f, err := os.Create(s.path(g))
			if err != nil {
				return err
			}
			s.files = append(s.files, f)
			s.count = append(s.count, 0)
			s.w = append(s.w, bufio.NewWriterSize(f, 1<<16))
		}
	}
	g, ok := s.group[op.Key]
	if !ok {
		g = len(s.group) % s.groups
		s.group[op.Key] = g
	}
	s.count[g]++
	s.buf = appendOp(s.buf[:0], i, op)
	_, err := s.w[g].Write(s.buf)
	return err
}

func (s *spill) close() error {
	var first error
	for g, f := range s.files {
		if err := s.w[g].Flush(); err != nil && first == nil {
			first = err
		}
		if err := f.Close(); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// read loads group g's operations into h, returning each one's index in
// the whole history.
func (s *spill) read(g int, h *history.History) ([]int32, error) {
	b, err := os.ReadFile(s.path(g))
	if err != nil {
		return nil, err
	}
	os.Remove(s.path(g))
	// sized once: growing slices of this size is slow (see history.Load)
	idx := make([]int32, 0, s.count[g])
	h.Ops = make([]history.Op, 0, s.count[g])
	for len(b) > 0 {
		var op history.Op
		var i int32
		if b, i, err = readOp(b, &op); err != nil {
			return nil, fmt.Errorf("spilled operations: %w", err)
		}
		h.Ops = append(h.Ops, op)
		idx = append(idx, i)
	}
	return idx, nil
}
