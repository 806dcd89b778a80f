package tables

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/lockcheck/lockcheck/measure"
	"github.com/lockcheck/lockcheck/reports"
)

// ReadEarlier reads the table file (catch-rate.json, false-alarms.json,
// claims.json...) a measurement left in dir, to go on from it (--resume):
// nil, nil when dir holds none.
func ReadEarlier[T any](dir, file string) (*T, error) {
	var t T
	err := reports.ReadJSON(filepath.Join(dir, file), &t)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return &t, nil
}

// doneOf is what an earlier table's results (runs or rows) hold of
// plan's shard, by key: those kept says are figures; the rest (a run
// that failed to run) are made again. Every one must be an item of the
// shard.
func doneOf[T, R any](plan measure.Plan[T], shard measure.Shard, results []R, key func(R) string, kept func(R) bool, dir string) (*measure.Done[R], error) {
	var figures []R
	for _, r := range results {
		if kept(r) {
			figures = append(figures, r)
		}
	}
	done, err := measure.NewDone(figures, key)
	if err == nil {
		err = measure.CheckDone(plan, shard, done)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", dir, err)
	}
	return done, nil
}

// sameShard says whether an earlier table's part is the shard s.
func sameShard(p measure.Part, s measure.Shard) bool {
	return p.Shard == s.I && max(p.Shards, 1) == max(s.N, 1)
}

// span is when a measurement began, what it took and on what, carried
// on across a resume: the earlier measurement's start, time and machine
// come first.
type span struct {
	begin  time.Time
	before time.Duration
	prior  string
	now    time.Time
}

// newSpan starts a measurement's span now; a resumed one (started is not
// zero) goes on from the earlier measurement's.
func newSpan(started time.Time, elapsed reports.Millis, machine string) span {
	now := time.Now()
	if started.IsZero() {
		return span{begin: now, now: now}
	}
	return span{begin: started, before: time.Duration(elapsed) * time.Millisecond, prior: machine, now: now}
}

// elapsed is the time measured so far, the earlier part's included.
func (s span) elapsed() reports.Millis { return reports.MillisOf(s.before + time.Since(s.now)) }

// machine is the table's machine: the earlier part's, then this one's.
func (s span) machine(now string) string {
	if s.prior == "" {
		return now
	}
	return s.prior + "; then " + now
}
