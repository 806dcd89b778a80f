package checker

import (
	"bufio"
	"encoding/binary"
	"io"
	"math/bits"
	"os"
	"slices"
)

// noticeExact is how many figures noticeStats keeps exactly. Past it,
// they go into a histogram of fixed size: a history of any length is
// summarized in bounded memory, its median within 3 %.
const noticeExact = 1 << 16

// histSub is how many buckets the histogram has per power of two of
// microseconds: each within 1/histSub of its values.
const histSub = 32

// histBuckets covers every int64 count of nanoseconds.
const histBuckets = 2*histSub + 48*histSub

// noticeStats folds losses into the summary, in RunFile one group of
// keys at a time (merge).
type noticeStats struct {
	losses, told int
	worst        int64
	// exact are the told figures (ns), until there are more than
	// noticeExact; then hist counts them instead (exact nil).
	exact []int64
	hist  []int64
}

func (s *noticeStats) add(l *Loss) {
	s.losses++
	if !l.Told {
		return
	}
	s.told++
	d := max(l.ToldAt-l.LostAt, 0)
	s.worst = max(s.worst, d)
	if s.hist != nil {
		s.hist[bucketOf(d)]++
		return
	}
	s.exact = append(s.exact, d)
	if len(s.exact) > noticeExact {
		s.toHistogram()
	}
}

// toHistogram moves the exact figures into the histogram.
func (s *noticeStats) toHistogram() {
	if s.hist == nil {
		s.hist = make([]int64, histBuckets)
	}
	for _, d := range s.exact {
		s.hist[bucketOf(d)]++
	}
	s.exact = nil
}

func (s *noticeStats) merge(o *noticeStats) {
	s.losses += o.losses
	s.told += o.told
	s.worst = max(s.worst, o.worst)
	if s.hist == nil && o.hist == nil && len(s.exact)+len(o.exact) <= noticeExact {
		s.exact = append(s.exact, o.exact...)
		return
	}
	s.toHistogram()
	for _, d := range o.exact {
		s.hist[bucketOf(d)]++
	}
	for b, n := range o.hist {
		s.hist[b] += n
	}
}

func (s *noticeStats) summary() NoticeSummary {
	sum := NoticeSummary{Losses: s.losses, Told: s.told, NeverTold: s.losses - s.told, WorstMs: float64(s.worst) / 1e6}
	switch {
	case s.told == 0:
	case s.hist != nil:
		sum.Approximate = true
		rank, seen := int64(s.told-1)/2, int64(0)
		for b, n := range s.hist {
			if seen += n; seen > rank {
				sum.MedianMs = float64(min(bucketMiddle(b), s.worst)) / 1e6
				break
			}
		}
	default:
		xs := slices.Clone(s.exact)
		slices.Sort(xs)
		n := len(xs)
		sum.MedianMs = float64(xs[(n-1)/2]+xs[n/2]) / 2 / 1e6
	}
	return sum
}

// bucketOf is the histogram bucket of d ns: one per microsecond below
// 2*histSub µs, then histSub per power of two.
func bucketOf(d int64) int {
	u := uint64(max(d, 0)) / 1000
	if u < 2*histSub {
		return int(u)
	}
	e := bits.Len64(u) - bits.Len64(2*histSub-1) // u>>e is in [histSub, 2*histSub)
	return 2*histSub + (e-1)*histSub + int(u>>e) - histSub
}

// bucketMiddle is the middle of bucket b, in ns.
func bucketMiddle(b int) int64 {
	if b < 2*histSub {
		return int64(b)*1000 + 500
	}
	e := (b-2*histSub)/histSub + 1
	lo := uint64((b-2*histSub)%histSub+histSub) << e
	return int64(lo+uint64(1)<<(e-1)) * 1000
}

// noticePart is what a part of a history (checkPart's) keeps of its
// losses: every one in the summary, and those a timeline draws.
type noticePart struct {
	stats noticeStats
	shown []Loss
}

// add counts one key's losses.
func (n *noticePart) add(losses []Loss) {
	for i := range losses {
		n.stats.add(&losses[i])
	}
}

// show keeps the losses of one key that a timeline of its shown holds
// may draw: those that overlap the holds' span, up to ShownHolds, in the
// order they were lost.
func (n *noticePart) show(losses []Loss, holds []Hold) {
	n.shown = append(n.shown, shownLosses(losses, holds)...)
}

func shownLosses(losses []Loss, holds []Hold) []Loss {
	from, to := holdSpan(holds)
	var out []Loss
	for _, l := range losses {
		if l.ToldAt >= from && l.LostAt <= to {
			out = append(out, l)
		}
	}
	sortLosses(out)
	return out[:min(len(out), ShownHolds)]
}

func (n *noticePart) merge(o *noticePart) {
	n.stats.merge(&o.stats)
	n.shown = append(n.shown, o.shown...)
}

// result is the Result's share: the summary, and the losses shown.
func (n *noticePart) result() Notice {
	s := n.stats.summary()
	sortLosses(n.shown)
	return Notice{TimeToNotice: &s, Losses: n.shown}
}

// appendLoss encodes a loss for a key's spill (its key is the file's).
func appendLoss(b []byte, l *Loss) []byte {
	told := int64(0)
	if l.Told {
		told = 1
	}
	for _, v := range [...]int64{int64(l.Worker), int64(l.Client), int64(l.Acquire), l.LostAt, l.ToldAt, int64(l.Op), told} {
		b = binary.AppendVarint(b, v)
	}
	for _, s := range [...]string{l.LostBy, l.ToldBy} {
		b = binary.AppendUvarint(b, uint64(len(s)))
		b = append(b, s...)
	}
	return b
}

// readLoss decodes what appendLoss wrote.
func readLoss(b []byte, key string, l *Loss) error {
	var v [7]int64
	for j := range v {
		x, k := binary.Varint(b)
		if k <= 0 {
			return errSpill
		}
		v[j], b = x, b[k:]
	}
	var s [2]string
	for j := range s {
		n, k := binary.Uvarint(b)
		if k <= 0 || uint64(len(b)-k) < n {
			return errSpill
		}
		s[j], b = string(b[k:k+int(n)]), b[k+int(n):]
	}
	*l = Loss{Key: key, Worker: int(v[0]), Client: int(v[1]), Acquire: int(v[2]), LostAt: v[3], ToldAt: v[4], Op: int(v[5]),
		Told: v[6] == 1, LostBy: s[0], ToldBy: s[1]}
	return nil
}

// lossSpill keeps on disk the losses of a key RunFile checks in chunks:
// which of them a result shows is known only once every chunk was
// checked (shownSpill). Its file is made with the key's first loss.
type lossSpill struct {
	path string
	f    *os.File
	w    *bufio.Writer
	buf  []byte
}

func (s *lossSpill) add(losses []Loss) error {
	if len(losses) == 0 {
		return nil
	}
	if s.f == nil {
		f, err := os.Create(s.path)
		if err != nil {
			return err
		}
		s.f, s.w = f, bufio.NewWriterSize(f, 1<<16)
	}
	for i := range losses {
		s.buf = appendFramed(s.buf[:0], func(b []byte) []byte { return appendLoss(b, &losses[i]) })
		if _, err := s.w.Write(s.buf); err != nil {
			return err
		}
	}
	return nil
}

// shown reads back what shownLosses keeps of the key's losses, holding
// only those that overlap the shown holds.
func (s *lossSpill) shown(key string, holds []Hold) ([]Loss, error) {
	if s.f == nil {
		return nil, nil
	}
	if err := s.w.Flush(); err != nil {
		return nil, err
	}
	if _, err := s.f.Seek(0, io.SeekStart); err != nil {
		return nil, err
	}
	from, to := holdSpan(holds)
	var in []Loss
	err := readFramed(bufio.NewReaderSize(s.f, 1<<16), func(rec []byte) error {
		var l Loss
		if err := readLoss(rec, key, &l); err != nil {
			return err
		}
		if l.ToldAt >= from && l.LostAt <= to {
			in = append(in, l)
		}
		return nil
	})
	return shownLosses(in, holds), err
}

func (s *lossSpill) close() {
	if s != nil && s.f != nil {
		s.f.Close()
	}
}
