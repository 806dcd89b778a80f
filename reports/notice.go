package reports

import (
	"fmt"
	"html"
	"strings"

	"github.com/lockcheck/lockcheck/checker"
)

// drawLosses draws, on each holder's lane, the stretch from a lost lock to
// the reply that told its holder: a belief with no lock under it, the
// hold's colour faded and outlined dashed, so that it reads as a hold
// that was no longer there. A stretch its holder was never told of ends
// where its tenure did (it moved on, or the run ended), outlined red.
func drawLosses(s *strings.Builder, losses []checker.Loss, x func(int64) float64, in func(int64, int64) bool, laneY func(int) float64, lane map[int]int) {
	for _, l := range losses {
		if _, ok := lane[l.Worker]; !ok || !in(l.LostAt, l.ToldAt) {
			continue
		}
		class, stroke := "unheld", colors["unheld"]
		if !l.Told {
			class, stroke = "unheld untold", colors["untold"]
		}
		x0, x1 := x(l.LostAt), x(l.ToldAt)
		fmt.Fprintf(s, `<rect class="%s" fill="%s" fill-opacity="0.2" stroke="%s" stroke-dasharray="3 2" x="%.1f" y="%.0f" width="%.1f" height="%d" rx="2"><title>%s</title></rect>`,
			class, colors["unheld"], stroke, x0, laneY(l.Worker), max(x1-x0, 1), rowH, html.EscapeString(lossText(l)))
	}
}

// lossText is a lost lock's tooltip: when and how it was lost, and when
// and how its holder learnt it.
func lossText(l checker.Loss) string {
	how := map[string]string{"lease": "its lease ran out", "takeover": "another worker's acquire took it", "reply": "no earlier than the reply that said so"}[l.LostBy]
	t := fmt.Sprintf("worker %d lost the lock at %s (%s)", l.Worker, secs(l.LostAt), how)
	if ms, ok := l.NoticeMs(); ok {
		return t + fmt.Sprintf(" and was told at %s (%s): %.1f ms believing with no lock", secs(l.ToldAt), l.ToldBy, ms)
	}
	return t + fmt.Sprintf(" and was never told: %s at %s", l.ToldBy, secs(l.ToldAt))
}
