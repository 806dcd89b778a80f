package checker

import (
	"math"
	"sort"
	"strings"

	"github.com/lockcheck/lockcheck/history"
)

// never is the time an unknown operation returns, and the end of a lease
// that has no expiry.
const never int64 = math.MaxInt64

// window is a closed interval on the harness clock.
type window struct{ start, end int64 }

// lossWindows are the merged, sorted intervals during which a key may lose
// its state under opts.
type lossWindows []window

func newLossWindows(h *history.History, end int64, opts Options) lossWindows {
	return lossWindowsOf(h, end, opts, func(string) bool { return true })
}

// newCounterLoss are the windows in which a fence counter may roll back:
// the loss windows of every fault but a clock fault, which moves a
// server's clock (ending leases early or late) and never a counter. So a
// fence that is not drawn from a counter shows across clock-jump and
// clock-strobe as fences that do not grow.
func newCounterLoss(h *history.History, end int64, opts Options) lossWindows {
	return lossWindowsOf(h, end, opts, func(name string) bool { return !clockFault(name) })
}

// clockFault says whether a fault only moves a server's clock.
func clockFault(name string) bool { return strings.HasPrefix(name, "clock-") }

func lossWindowsOf(h *history.History, end int64, opts Options, counts func(fault string) bool) lossWindows {
	switch opts.Loss {
	case LossNever:
		return nil
	case LossAnytime:
		return lossWindows{{math.MinInt64, never}}
	}
	var ws []window
	for _, f := range h.Faults {
		if !lossFault(f.Name, opts.LossFaults) || !counts(f.Name) {
			continue
		}
		e := f.End
		if e == 0 || e > end {
			e = max(end, f.Start)
		}
		ws = append(ws, window{f.Start, satAdd(e, int64(opts.FaultGrace))})
	}
	return mergeWindows(ws)
}

// mergeWindows sorts windows and joins those that meet.
func mergeWindows(ws []window) lossWindows {
	sort.Slice(ws, func(i, j int) bool { return ws[i].start < ws[j].start })
	var merged lossWindows
	for _, w := range ws {
		if n := len(merged); n > 0 && w.start <= merged[n-1].end {
			merged[n-1].end = max(merged[n-1].end, w.end)
			continue
		}
		merged = append(merged, w)
	}
	return merged
}

func lossFault(name string, only []string) bool {
	if len(only) == 0 {
		return true
	}
	for _, n := range only {
		if n == name {
			return true
		}
	}
	return false
}

// meets says whether some window intersects [from, to].
func (ls lossWindows) meets(from, to int64) bool {
	if len(ls) == 0 {
		return false
	}
	// first window that ends at or after from
	i := sort.Search(len(ls), func(i int) bool { return ls[i].end >= from })
	return i < len(ls) && ls[i].start <= to
}

// satAdd adds without wrapping past never.
func satAdd(a, b int64) int64 {
	if b > 0 && a > never-b {
		return never
	}
	return a + b
}

// faultIndex answers "which faults were active during [a, b]" for findings.
type faultIndex struct {
	faults []history.Fault
	end    int64
}

func newFaultIndex(h *history.History, end int64) faultIndex {
	return faultIndex{faults: h.Faults, end: end}
}

// during lists the faults whose window intersects [a, b]; a fault still
// open at the end of the run lasts until the end.
func (fi faultIndex) during(a, b int64) []history.Fault {
	var out []history.Fault
	for _, f := range fi.faults {
		e := f.End
		if e == 0 {
			e = max(fi.end, f.Start)
		}
		if f.Start <= b && e >= a {
			f.Nodes = nil // the window's own record has them
			out = append(out, f)
		}
	}
	return out
}
