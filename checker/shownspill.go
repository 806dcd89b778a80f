package checker

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"

	"github.com/lockcheck/lockcheck/history"
	"github.com/lockcheck/lockcheck/history/historyjson"
)

// shownSpill keeps, on disk, the holds and writes of each key RunFile
// checks in chunks: which of them a result shows (ShownHolds around the
// key's first finding) is known only once every chunk was checked.
type shownSpill struct {
	dir  string
	keys map[string]*keyShown
	buf  []byte
	err  error
}

// keyShown is one key's files, holds in start order, writes in call
// order, and losses (its chunks' lossesOf).
type keyShown struct {
	n              int
	holds, writes  *os.File
	holdsW, writeW *bufio.Writer
	losses         *lossSpill
}

// add is checkPart's sink for a key checked in chunks: the chunk's holds,
// in start order with the whole history's operation indices, its writes
// and its losses.
func (s *shownSpill) add(key string, holds []Hold, writes []history.Op, losses []Loss) {
	if s.err != nil {
		return
	}
	k := s.keys[key]
	if k == nil {
		k = &keyShown{}
		base := filepath.Join(s.dir, fmt.Sprintf("shown-%d", len(s.keys)))
		if k.holds, s.err = os.Create(base + ".holds"); s.err != nil {
			return
		}
		if k.writes, s.err = os.Create(base + ".writes"); s.err != nil {
			return
		}
		k.holdsW, k.writeW = bufio.NewWriterSize(k.holds, 1<<16), bufio.NewWriterSize(k.writes, 1<<16)
		k.losses = &lossSpill{path: base + ".losses"}
		s.keys[key] = k
	}
	for i := range holds {
		s.buf = appendFramed(s.buf[:0], func(b []byte) []byte { return appendHold(b, &holds[i]) })
		if _, s.err = k.holdsW.Write(s.buf); s.err != nil {
			return
		}
	}
	for i := range writes {
		s.buf = appendFramed(s.buf[:0], func(b []byte) []byte { return appendOp(b, 0, &writes[i]) })
		if _, s.err = k.writeW.Write(s.buf); s.err != nil {
			return
		}
	}
	k.n += len(holds)
	s.err = k.losses.add(losses)
}

// into puts each key's shown holds and writes, and its count of holds,
// into p, as checkPart does for a key checked whole.
func (s *shownSpill) into(p *part) error {
	if s.err != nil {
		return s.err
	}
	if len(s.keys) == 0 {
		return nil
	}
	first := p.firstFindings()
	names := make([]string, 0, len(s.keys))
	for name := range s.keys {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		k := s.keys[name]
		for _, w := range []*bufio.Writer{k.holdsW, k.writeW} {
			if err := w.Flush(); err != nil {
				return err
			}
		}
		at, found := first[name]
		holds, err := k.shownHolds(at, found)
		if err != nil {
			return err
		}
		writes, err := k.shownWrites(holds)
		if err != nil {
			return err
		}
		losses, err := k.losses.shown(name, holds)
		if err != nil {
			return err
		}
		p.notice.shown = append(p.notice.shown, losses...)
		p.heldTotal[name] = k.n
		p.holds = append(p.holds, holds...)
		p.writes = append(p.writes, writes...)
	}
	return nil
}

// eachHold reads the key's holds in order until each says stop.
func (k *keyShown) eachHold(each func(i int, hd *Hold) bool) error {
	if _, err := k.holds.Seek(0, io.SeekStart); err != nil {
		return err
	}
	i := 0
	err := readFramed(bufio.NewReaderSize(k.holds, 1<<16), func(rec []byte) error {
		var hd Hold
		if err := readHold(rec, &hd); err != nil {
			return err
		}
		if !each(i, &hd) {
			return errStop
		}
		i++
		return nil
	})
	if errors.Is(err, errStop) {
		return nil
	}
	return err
}

var errStop = errors.New("stop")

// shownHolds picks what shownHolds would from the whole list.
func (k *keyShown) shownHolds(at int64, found bool) ([]Hold, error) {
	first := 0
	if found && k.n > ShownHolds {
		first = k.n
		if err := k.eachHold(func(i int, hd *Hold) bool {
			if hd.End >= at {
				first = i
				return false
			}
			return true
		}); err != nil {
			return nil, err
		}
	}
	lo := 0
	if k.n > ShownHolds {
		lo = shownFrom(first, k.n)
	}
	var out []Hold
	err := k.eachHold(func(i int, hd *Hold) bool {
		if i >= lo {
			out = append(out, *hd)
		}
		return len(out) < ShownHolds
	})
	return out, err
}

// shownWrites picks what shownWrites would from every write of the key.
func (k *keyShown) shownWrites(holds []Hold) ([]history.Op, error) {
	from, to := holdSpan(holds)
	if _, err := k.writes.Seek(0, io.SeekStart); err != nil {
		return nil, err
	}
	var out []history.Op
	err := readFramed(bufio.NewReaderSize(k.writes, 1<<16), func(rec []byte) error {
		var op history.Op
		if _, _, err := readOp(rec, &op, nil); err != nil {
			return err
		}
		if op.Call < from || op.Call > to {
			return nil
		}
		if len(holds) == 0 && len(out) >= ShownHolds {
			return errStop
		}
		out = append(out, op)
		return nil
	})
	if errors.Is(err, errStop) {
		err = nil
	}
	return out, err
}

func (s *shownSpill) close() {
	for _, k := range s.keys {
		k.holds.Close()
		k.writes.Close()
		k.losses.close()
	}
}

// appendFramed appends a record made by enc, prefixed with its length.
func appendFramed(b []byte, enc func([]byte) []byte) []byte {
	start := len(b)
	b = append(b, make([]byte, binary.MaxVarintLen64)...)
	b = enc(b)
	n := len(b) - start - binary.MaxVarintLen64
	var hdr [binary.MaxVarintLen64]byte
	k := binary.PutUvarint(hdr[:], uint64(n))
	copy(b[start:], hdr[:k])
	return append(b[:start+k], b[start+binary.MaxVarintLen64:]...)
}

// readFramed hands each record of r (appendFramed's) to each.
func readFramed(r *bufio.Reader, each func(rec []byte) error) error {
	var rec []byte
	for {
		n, err := binary.ReadUvarint(r)
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		if uint64(cap(rec)) < n {
			rec = make([]byte, n)
		}
		rec = rec[:n]
		if _, err := io.ReadFull(r, rec); err != nil {
			return fmt.Errorf("record cut short: %w", err)
		}
		if err := each(rec); err != nil {
			return err
		}
	}
}

// appendHold encodes a hold as appendOp does an operation (its key is
// the file's).
func appendHold(b []byte, hd *Hold) []byte {
	for _, n := range [...]int64{int64(hd.Client), int64(hd.Worker), hd.Fence, hd.Start, hd.End, int64(hd.Acquire), int64(hd.Extend)} {
		b = binary.AppendVarint(b, n)
	}
	var flags byte
	if hd.HasFence {
		flags = 1
	}
	b = append(b, flags)
	for _, s := range [...]string{hd.Key, hd.Token, hd.EndedBy} {
		b = binary.AppendUvarint(b, uint64(len(s)))
		b = append(b, s...)
	}
	return b
}

// readHold decodes what appendHold wrote.
func readHold(b []byte, hd *Hold) error {
	var n [7]int64
	for j := range n {
		v, k := binary.Varint(b)
		if k <= 0 {
			return errSpill
		}
		n[j], b = v, b[k:]
	}
	if len(b) == 0 {
		return errSpill
	}
	hd.HasFence, b = b[0] == 1, b[1:]
	var s [3]string
	for j := range s {
		l, k := binary.Uvarint(b)
		if k <= 0 || uint64(len(b)-k) < l {
			return errSpill
		}
		s[j], b = string(b[k:k+int(l)]), b[k+int(l):]
	}
	hd.Client, hd.Worker, hd.Fence, hd.Start, hd.End, hd.Acquire, hd.Extend = int(n[0]), int(n[1]), n[2], n[3], n[4], int(n[5]), int(n[6])
	hd.Key, hd.Token, hd.EndedBy = s[0], s[1], s[2]
	return nil
}

// resolveRefs fills in the operations a finding names by index only (an
// earlier chunk's: see ref), reading them from the history's file.
func resolveRefs(path string, res *Result) error {
	want := map[int][]*OpRef{}
	for ci := range res.Checks {
		for fi := range res.Checks[ci].Findings {
			f := &res.Checks[ci].Findings[fi]
			for j := range f.Ops {
				if r := &f.Ops[j]; r.Op.Kind == "" {
					want[r.Index] = append(want[r.Index], r)
				}
			}
		}
	}
	if len(want) == 0 {
		return nil
	}
	_, err := historyjson.Scan(path, func(i int, op *history.Op) error {
		for _, r := range want[i] {
			r.Op = *op
		}
		return nil
	})
	return err
}
