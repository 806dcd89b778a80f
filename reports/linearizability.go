package reports

import (
	"context"
	"fmt"
	"os"

	"github.com/anishathalye/porcupine"

	"github.com/lockcheck/lockcheck/checker"
	"github.com/lockcheck/lockcheck/history"
)

// maxPictureOps bounds what porcupine's page draws.
const maxPictureOps = 1500

// WriteLinearizability writes porcupine's page for h to path: the
// partitions that are not linearizable (or, when all are, the first
// segments), with the fault windows, double holders and lost locks of that
// time as annotations. It returns one line saying what the page shows.
func WriteLinearizability(ctx context.Context, path string, h *history.History, res *checker.Result) (string, error) {
	pic, err := checker.Explain(ctx, h, res.Options, maxPictureOps)
	if err != nil {
		return "", fmt.Errorf("linearizability picture: %w", err)
	}
	if pic.Ops == 0 {
		page := "<!doctype html><meta charset=\"utf-8\"><title>linearizability</title><p>No lock operations to draw.</p>\n"
		if err := os.WriteFile(path, []byte(page), 0o644); err != nil {
			return "", fmt.Errorf("write linearizability page: %w", err)
		}
		return "no lock operations", nil
	}
	pic.Info.AddAnnotations(annotations(h, res, pic.Start, pic.End))
	if err := porcupine.VisualizePath(pic.Model, pic.Info, path); err != nil {
		return "", fmt.Errorf("write linearizability page: %w", err)
	}
	what := fmt.Sprintf("the first %d partitions (%d operations), all linearizable", pic.Partitions, pic.Ops)
	if pic.Failing {
		what = fmt.Sprintf("the %d partitions that are not linearizable (%d operations): porcupine says %s", pic.Partitions, pic.Ops, pic.Result)
	}
	return what, nil
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
