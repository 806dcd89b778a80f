package reports

import (
	"fmt"
	"html"
	"os"
	"path/filepath"
	"strings"

	"github.com/anishathalye/porcupine"

	"github.com/lockcheck/lockcheck/checker"
	"github.com/lockcheck/lockcheck/history"
)

// WriteLinearizability writes porcupine's page for the checked history to
// path, from the picture the check kept (res.Picture): the partitions that
// are not linearizable (or, when all are, the first segments), with the
// fault windows, double holders and lost locks of that time as
// annotations. Several failing partitions, each from its own search, get
// a page each (path with -1, -2, ...) and path lists them. It returns one
// line saying what the page shows.
func WriteLinearizability(path string, h *history.History, res *checker.Result) (string, error) {
	pic := res.Picture
	if pic == nil || len(pic.Parts) == 0 {
		why := "no lock operations"
		if pic != nil && pic.Why != "" {
			why = pic.Why
		}
		page := "<!doctype html><meta charset=\"utf-8\"><title>linearizability</title><p>Nothing drawn: " + html.EscapeString(why) + ".</p>\n"
		if err := os.WriteFile(path, []byte(page), 0o644); err != nil {
			return "", fmt.Errorf("write linearizability page: %w", err)
		}
		return why, nil
	}
	if !pic.Failing {
		part := pic.Parts[0]
		if err := drawPart(path, h, res, pic.Model, part); err != nil {
			return "", err
		}
		return fmt.Sprintf("%s (%d operations), all linearizable", part.Label, part.Ops), nil
	}
	if len(pic.Parts) == 1 {
		part := pic.Parts[0]
		if err := drawPart(path, h, res, pic.Model, part); err != nil {
			return "", err
		}
		return fmt.Sprintf("the partition that is not linearizable, %s (%d operations): porcupine says %s", part.Label, part.Ops, part.Result), nil
	}
	var list strings.Builder
	list.WriteString("<!doctype html><meta charset=\"utf-8\"><title>linearizability</title><h1>Partitions that are not linearizable</h1><ul>\n")
	base := strings.TrimSuffix(filepath.Base(path), ".html")
	for i, part := range pic.Parts {
		name := fmt.Sprintf("%s-%d.html", base, i+1)
		if err := drawPart(filepath.Join(filepath.Dir(path), name), h, res, pic.Model, part); err != nil {
			return "", err
		}
		fmt.Fprintf(&list, "<li><a href=\"%s\">%s</a>: %d operations, porcupine says %s</li>\n", name, html.EscapeString(part.Label), part.Ops, part.Result)
	}
	list.WriteString("</ul>\n")
	if err := os.WriteFile(path, []byte(list.String()), 0o644); err != nil {
		return "", fmt.Errorf("write linearizability page: %w", err)
	}
	return fmt.Sprintf("the %d partitions that are not linearizable (%d operations), one page each", len(pic.Parts), pic.Ops()), nil
}

// drawPart writes porcupine's page for one part of the picture.
func drawPart(path string, h *history.History, res *checker.Result, m porcupine.Model, part checker.PicturePart) error {
	part.Info.AddAnnotations(annotations(h, res, part.Start, part.End))
	if err := porcupine.VisualizePath(m, part.Info, path); err != nil {
		return fmt.Errorf("write linearizability page: %w", err)
	}
	return nil
}

// annotations are the fault windows, double holders and lost locks between
// from and to, for porcupine's page.
func annotations(h *history.History, res *checker.Result, from, to int64) []porcupine.Annotation {
	var out []porcupine.Annotation
	end := h.End()
	for _, f := range h.Faults {
		fe := f.End
		if fe == 0 {
			fe = end
		}
		if fe < from || f.Start > to {
			continue
		}
		out = append(out, porcupine.Annotation{Tag: "faults", Start: f.Start, End: fe, Description: f.Name,
			Details: faultText(f, fe), BackgroundColor: "#fdd9b5"})
	}
	for _, c := range res.Checks {
		for _, f := range c.Findings {
			if f.End < from || f.Start > to {
				continue
			}
			switch f.Kind {
			case checker.KindDoubleHolder:
				out = append(out, porcupine.Annotation{Tag: "double holders", Start: f.Start, End: f.End,
					Description: fmt.Sprintf("%.0f ms", f.OverlapMs), Details: f.Summary, BackgroundColor: "#f4a6a6"})
			case checker.KindLostLock:
				out = append(out, porcupine.Annotation{Tag: "lost locks", Start: f.End,
					Description: "lost", Details: f.Summary, BackgroundColor: "#ffe08a"})
			}
		}
	}
	return out
}
