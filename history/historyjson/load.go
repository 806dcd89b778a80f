package historyjson

import (
	"io"

	"github.com/lockcheck/lockcheck/history"
)

// Load reads a history written by Save, or any JSON with its fields in
// any layout (Reader), operations in the file's order: an operation's
// index is its place in the file, for every reader.
func Load(path string) (*history.History, error) {
	r, err := Open(path)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return readAll(r)
}

func readAll(r *Reader) (*history.History, error) {
	ops, err := r.ReadOps(nil, -1)
	if err != io.EOF {
		return nil, err
	}
	h := r.Head()
	if len(ops) > 0 {
		h.Ops = ops
	}
	return h, nil
}

// Scan reads the history at path without keeping its operations: each
// gets them in file order with their index, then Scan returns everything
// else (format, meta, scenario, every fault window). A file of any layout
// and length is read in one pass in the memory of its head and one
// operation (Reader).
func Scan(path string, each func(i int, op *history.Op) error) (*history.History, error) {
	r, err := Open(path)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	var op history.Op
	for {
		err := r.Next(&op)
		if err == io.EOF {
			return r.Head(), nil
		}
		if err != nil {
			return nil, err
		}
		if err := each(r.Index(), &op); err != nil {
			return nil, err
		}
	}
}
