package checker

import (
	"bufio"
	"fmt"
	"math"
	"os"
	"path/filepath"

	"github.com/lockcheck/lockcheck/history"
)

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
	// latest and disorder are, per group, the latest call so far and how
	// far before it a later operation was called (callOrder).
	latest, disorder []int64
	// maxTTL is each key's longest lease (keyOps.maxTTL).
	maxTTL map[string]int64
}

func (s *spill) path(g int) string { return filepath.Join(s.dir, fmt.Sprintf("group-%d", g)) }

func (s *spill) write(i int32, op *history.Op) error {
	if s.files == nil {
		s.files, s.w = make([]*os.File, s.groups), make([]*bufio.Writer, s.groups)
		s.count, s.latest, s.disorder = make([]int, s.groups), make([]int64, s.groups), make([]int64, s.groups)
		for g := range s.latest {
			s.latest[g] = math.MinInt64
		}
	}
	g, ok := s.group[op.Key]
	if !ok {
		g = len(s.group) % s.groups
		s.group[op.Key] = g
	}
	// a group's file is made when its first key comes: a history of a few
	// busy keys uses a few of its groups
	if s.files[g] == nil {
		f, err := os.Create(s.path(g))
		if err != nil {
			return err
		}
		s.files[g], s.w[g] = f, bufio.NewWriterSize(f, 1<<16)
	}
	s.count[g]++
	if s.latest[g] > op.Call {
		s.disorder[g] = max(s.disorder[g], s.latest[g]-op.Call)
	}
	s.latest[g] = max(s.latest[g], op.Call)
	s.maxTTL[op.Key] = maxTTLOf(s.maxTTL[op.Key], op)
	s.buf = appendFramed(s.buf[:0], func(b []byte) []byte { return appendOp(b, i, op) })
	_, err := s.w[g].Write(s.buf)
	return err
}

func (s *spill) close() error {
	var first error
	for g, f := range s.files {
		if f == nil {
			continue
		}
		if err := s.w[g].Flush(); err != nil && first == nil {
			first = err
		}
		if err := f.Close(); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// read hands group g's operations to each in the order they were
// written, reading the file a record at a time, and removes it.
func (s *spill) read(g int, each func(op *history.Op, i int32)) error {
	if s.files[g] == nil {
		return nil
	}
	f, err := os.Open(s.path(g))
	if err != nil {
		return err
	}
	defer os.Remove(s.path(g))
	defer f.Close()
	var op history.Op
	t := texts{}
	return readFramed(bufio.NewReaderSize(f, 1<<16), func(rec []byte) error {
		_, i, err := readOp(rec, &op, t)
		if err != nil {
			return fmt.Errorf("spilled operations: %w", err)
		}
		each(&op, i)
		return nil
	})
}
