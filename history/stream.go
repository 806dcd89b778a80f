package history

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"time"
)

// StreamName is the file in a run's folder that the run appends its
// operations and fault windows to as they happen. A run that finishes
// writes history.json and removes it; a run killed before that (SIGKILL,
// an OOM kill, a cancelled CI job) leaves it behind, and
// historyjson.LoadStream rebuilds the history it had so far.
const StreamName = "ops.jsonl"

// flushEvery bounds what a killed run loses: what returned more than this
// before the kill is on disk.
const flushEvery = 500 * time.Millisecond

// StreamLine is one line of the stream: the meta first, then operations
// and fault windows (a fault again, whole, each time it changes; I is its
// index).
type StreamLine struct {
	Meta  *Meta  `json:"meta,omitempty"`
	Op    *Op    `json:"op,omitempty"`
	Fault *Fault `json:"fault,omitempty"`
	I     int    `json:"i,omitempty"`
}

// stream appends lines to a file through a buffer that a ticker flushes.
type stream struct {
	f    *os.File
	w    *bufio.Writer
	enc  *json.Encoder
	buf  []byte // writeOp's line
	err  error  // the first write error; the stream stops at it
	stop chan struct{}
	done chan struct{}
}

// StreamTo makes r append meta, then every operation and fault change, to
// path as JSON lines, flushed at least every half second; from then on r
// keeps only its latest operations in memory. CloseStream flushes and
// closes the stream; SaveStream makes the history's file of it. Call it
// before the first operation.
func (r *Recorder) StreamTo(path string, meta Meta) error {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o644)
	if err != nil {
		return fmt.Errorf("history stream: %w", err)
	}
	s := &stream{f: f, w: bufio.NewWriterSize(f, 1<<16), stop: make(chan struct{}), done: make(chan struct{})}
	s.enc = json.NewEncoder(s.w)
	if meta.Started == "" {
		meta.Started = r.start.UTC().Format(time.RFC3339Nano)
	}
	r.mu.Lock()
	r.stream, r.streamed = s, true
	s.write(StreamLine{Meta: &meta})
	r.mu.Unlock()
	go r.flushLoop(s)
	return nil
}

func (r *Recorder) flushLoop(s *stream) {
	defer close(s.done)
	t := time.NewTicker(flushEvery)
	defer t.Stop()
	for {
		select {
		case <-t.C:
			r.mu.Lock()
			s.flush()
			r.mu.Unlock()
		case <-s.stop:
			return
		}
	}
}

// CloseStream flushes the stream and closes its file; it returns the
// first error the stream met. The recorder's ring of latest operations
// goes with it: what comes next (history.json, the check) reads the
// stream, and a full-speed run's ring is tens of MiB.
func (r *Recorder) CloseStream() error {
	r.mu.Lock()
	s := r.stream
	r.stream = nil
	if s != nil {
		r.ops, r.closed = nil, true
	}
	r.mu.Unlock()
	if s == nil {
		return nil
	}
	close(s.stop)
	<-s.done
	s.flush()
	if err := s.f.Close(); err != nil && s.err == nil {
		s.err = err
	}
	if s.err != nil {
		return fmt.Errorf("history stream: %w", s.err)
	}
	return nil
}

// write encodes one line; called with the recorder's lock held.
func (s *stream) write(l StreamLine) {
	if s == nil || s.err != nil {
		return
	}
	s.err = s.enc.Encode(l)
}

// writeOp is write for an operation's line, encoded by hand (appendOp):
// the same bytes as write(StreamLine{Op: op}).
func (s *stream) writeOp(op *Op) {
	if s == nil || s.err != nil {
		return
	}
	s.buf = append(appendOp(append(s.buf[:0], `{"op":`...), op), '}', '\n')
	_, s.err = s.w.Write(s.buf)
}

func (s *stream) flush() {
	if s.err == nil {
		s.err = s.w.Flush()
	}
}

// SaveStream writes the history's file at path (as Save does) from head
// (everything but the operations) and the operations of the stream a run
// wrote (StreamTo), copied a line at a time in the order they returned:
// a history of any length is written without holding its operations. It
// returns how many there were.
func SaveStream(stream, path string, head *History) (int, error) {
	in, err := os.Open(stream)
	if err != nil {
		return 0, fmt.Errorf("read history stream: %w", err)
	}
	defer in.Close()
	f, err := os.Create(path)
	if err != nil {
		return 0, fmt.Errorf("write history: %w", err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	n, err := copyStream(bufio.NewReaderSize(in, 1<<20), w, head)
	if ferr := w.Flush(); err == nil {
		err = ferr
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return 0, fmt.Errorf("write history %s from %s: %w", path, stream, err)
	}
	return n, nil
}

func copyStream(r *bufio.Reader, w *bufio.Writer, head *History) (int, error) {
	h := *head
	h.Ops = []Op{} // an array, even if empty
	if err := h.writeHead(w); err != nil {
		return 0, err
	}
	n := 0
	prefix := []byte(`{"op":`)
	for {
		line, err := r.ReadBytes('\n')
		if err != nil && err != io.EOF {
			return n, err
		}
		line = bytes.TrimRight(line, "\n")
		if len(line) > 0 {
			var op []byte
			if bytes.HasPrefix(line, prefix) && line[len(line)-1] == '}' {
				op = line[len(prefix) : len(line)-1]
			} else if !bytes.Contains(line, []byte(`"op"`)) {
				op = nil // the meta or a fault window: head has them
			} else {
				var l StreamLine
				if uerr := json.Unmarshal(line, &l); uerr != nil || l.Op == nil {
					return n, fmt.Errorf("stream line %q: %v", line, uerr)
				}
				if op, err = json.Marshal(l.Op); err != nil {
					return n, err
				}
			}
			if op != nil {
				if n > 0 {
					w.WriteByte(',')
				}
				w.Write(op)
				w.WriteByte('\n')
				n++
			}
		}
		if err == io.EOF {
			break
		}
	}
	_, err := w.WriteString("]}\n")
	return n, err
}
