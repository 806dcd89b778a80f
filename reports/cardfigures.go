package reports

import (
	"fmt"
	"slices"
	"strings"
)

// CardRun is what the report card takes of one run beyond the claims'
// figures: how long holders went on after losing their lock (checker's
// time to notice), and the errors the client surfaced by kind.
type CardRun struct {
	Losses       int    `json:"losses,omitempty"`
	NeverTold    int    `json:"never_told,omitempty"`
	NoticeMedian Millis `json:"notice_median_ms,omitempty"`
	NoticeWorst  Millis `json:"notice_worst_ms,omitempty"`
	// NoScript, NoLua, UnknownCommand, NoReply and OtherErrors count the
	// lock calls whose error was NOSCRIPT (a script cache emptied under a
	// library that does not load it again), a missing scripting engine (a
	// server without Lua: EVAL's "Could not find scripting engine"), an
	// unknown command (a build without the command), no reply (a timeout
	// or a broken connection: the outcome unknown), or anything else.
	NoScript       int `json:"noscript,omitempty"`
	NoLua          int `json:"no_lua,omitempty"`
	NoReply        int `json:"no_reply,omitempty"`
	UnknownCommand int `json:"unknown_command,omitempty"`
	OtherErrors    int `json:"other_errors,omitempty"`
}

// CardTally sums a row's CardRuns: the runs' medians (the row shows
// their median), the worst time to notice and the run it came from (its
// history, when kept), and the sums.
type CardTally struct {
	Losses         int      `json:"losses"`
	NeverTold      int      `json:"never_told"`
	Medians        []Millis `json:"notice_medians_ms,omitempty"`
	Worst          Millis   `json:"notice_worst_ms"`
	WorstRun       string   `json:"worst_run,omitempty"`
	NoScript       int      `json:"noscript"`
	NoLua          int      `json:"no_lua"`
	NoReply        int      `json:"no_reply"`
	UnknownCommand int      `json:"unknown_command"`
	OtherErrors    int      `json:"other_errors"`
}

func (t *CardTally) add(r ClaimRun) {
	t.Losses += r.Losses
	t.NeverTold += r.NeverTold
	if r.Losses > r.NeverTold {
		t.Medians = append(t.Medians, r.NoticeMedian)
	}
	if r.NoticeWorst > t.Worst || (t.WorstRun == "" && r.History != "" && r.NoticeWorst == t.Worst) {
		t.Worst, t.WorstRun = r.NoticeWorst, r.History
	}
	t.NoScript += r.NoScript
	t.NoLua += r.NoLua
	t.NoReply += r.NoReply
	t.UnknownCommand += r.UnknownCommand
	t.OtherErrors += r.OtherErrors
}

// notice is the tally's time to notice as a cell shows it: the median of
// the runs' medians and the worst, and the holds never told.
func (t CardTally) notice() string {
	if t.Losses == 0 {
		return "no loss"
	}
	var parts []string
	if len(t.Medians) > 0 {
		m := slices.Clone(t.Medians)
		slices.Sort(m)
		parts = append(parts, fmt.Sprintf("%s / %s", ms(m[len(m)/2]), ms(t.Worst)))
	}
	if t.NeverTold > 0 {
		parts = append(parts, fmt.Sprintf("%d of %d never told", t.NeverTold, t.Losses))
	}
	return strings.Join(parts, ", ")
}

// errors is the tally's surfaced errors as a cell shows them.
func (t CardTally) errors() string {
	var out []string
	for _, e := range []struct {
		n    int
		what string
	}{{t.NoScript, "NOSCRIPT"}, {t.NoLua, "no Lua engine"}, {t.UnknownCommand, "unknown command"}, {t.NoReply, "no reply"}, {t.OtherErrors, "other"}} {
		if e.n > 0 {
			out = append(out, fmt.Sprintf("%d %s", e.n, e.what))
		}
	}
	if len(out) == 0 {
		return "-"
	}
	return strings.Join(out, ", ")
}

// ms is a duration in ms, or s past a second.
func ms(m Millis) string {
	if m < 1000 {
		return fmt.Sprintf("%d ms", m)
	}
	return fmt.Sprintf("%.1f s", float64(m)/1000)
}
