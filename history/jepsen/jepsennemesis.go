package jepsen

import (
	"strings"

	"github.com/lockcheck/lockcheck/history"
)

// Jepsen's nemesis writes each of its operations twice, as invocation and
// completion (both usually :info), one at a time. :start-X opens a window
// named X and :stop-X closes it (:start and :stop: a window named
// "nemesis"), from the start's invocation to the stop's completion; any
// other nemesis operation (:kill, :pause, :bump-clock...) is a window of
// its own, from its invocation to its completion. A window still open at
// the end has End 0: active until the history's end.

// nemesisState pairs the nemesis's records.
type nemesisState struct {
	pending bool   // an invocation waits for its completion
	f       string // the pending operation's :f
	closing int    // the window the pending operation ends, or -1
	detail  int    // the window its completion's :value describes, or -1
	open    map[string]int
}

// nemesis takes one record of the nemesis.
func (im *jepsenImport) nemesis(v *ednValue, f string, t int64) {
	n, faults := &im.nem, &im.h.Faults
	invoke := !n.pending || n.f != f
	n.pending, n.f = invoke, f
	start, stop := f == "start" || strings.HasPrefix(f, "start-"), f == "stop" || strings.HasPrefix(f, "stop-")
	name := f
	if start || stop {
		if _, name, _ = strings.Cut(f, "-"); name == "" {
			name = "nemesis"
		}
	}
	switch {
	case !invoke:
		if n.closing >= 0 {
			(*faults)[n.closing].End = t
		}
		if n.detail >= 0 {
			setDetail(&(*faults)[n.detail], v)
		}
		return
	case start:
		n.closing, n.detail = -1, -1
		if _, active := n.open[name]; !active {
			n.open[name], n.detail = len(*faults), len(*faults)
			*faults = append(*faults, history.Fault{Name: name, Start: t})
		}
	case stop:
		n.closing, n.detail = -1, -1
		if i, active := n.open[name]; active {
			delete(n.open, name)
			(*faults)[i].End, n.closing = t, i
		}
	default:
		n.closing, n.detail = len(*faults), len(*faults)
		*faults = append(*faults, history.Fault{Name: name, Start: t, End: t})
	}
	if n.detail >= 0 {
		setDetail(&(*faults)[n.detail], v)
	}
}

// setDetail keeps what the nemesis said it did (its :value), if anything.
func setDetail(f *history.Fault, v *ednValue) {
	if val := v.get("value"); val != nil && val.kind != ednNil && f.Detail == "" {
		f.Detail = short(val)
	}
}
