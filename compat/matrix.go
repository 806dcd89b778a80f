package compat

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/lockcheck/lockcheck/topology"
)

// Column is one build in one topology.
type Column struct {
	Server   string `json:"server"`
	Version  string `json:"version"`
	Topology string `json:"topology"`
	// Status is observed, unavailable (no image here) or error (the
	// topology did not start).
	Status string `json:"status"`
	Reason string `json:"reason,omitempty"`
	Image  string `json:"image,omitempty"`
}

// Matrix is every observation of a compat run.
type Matrix struct {
	Generated string   `json:"generated"`
	Columns   []Column `json:"columns"`
	Cells     []Cell   `json:"cells"`
}

// Count returns how many cells have an outcome.
func (m *Matrix) Count(o Outcome) int {
	n := 0
	for _, c := range m.Cells {
		if c.Outcome == o {
			n++
		}
	}
	return n
}

// Errors counts the columns whose topology did not start.
func (m *Matrix) Errors() int {
	n := 0
	for _, c := range m.Columns {
		if c.Status == "error" {
			n++
		}
	}
	return n
}

// RunMatrix observes every build in every kind, each on a fresh topology
// that is removed afterwards. An unavailable build gives a column marked
// unavailable, with its reason in every cell.
func RunMatrix(ctx context.Context, eng *topology.Engine, builds []topology.Build, src topology.Sources, kinds []topology.Kind, progress io.Writer) (*Matrix, error) {
	m := &Matrix{Generated: time.Now().UTC().Format(time.RFC3339)}
	for _, b := range builds {
		img, err := eng.Obtain(ctx, b, src, progress)
		for _, kind := range kinds {
			if ctx.Err() != nil {
				return m, ctx.Err()
			}
			col := Column{Server: b.Name, Topology: string(kind), Image: img.Ref}
			if err != nil {
				col.Status, col.Reason = "unavailable", err.Error()
				m.Columns = append(m.Columns, col)
				m.Cells = append(m.Cells, unavailableCells(b, kind, col.Reason)...)
				continue
			}
			fmt.Fprintf(progress, "%s %s:\n", b.Name, kind)
			cells, version, serr := observeOne(ctx, eng, b, img.Ref, kind, progress)
			col.Version = version
			if serr != nil {
				col.Status, col.Reason = "error", serr.Error()
				fmt.Fprintf(progress, "  error: %v\n", serr)
			} else {
				col.Status = "observed"
			}
			m.Columns = append(m.Columns, col)
			m.Cells = append(m.Cells, cells...)
		}
	}
	if slices.Contains(kinds, topology.Replicated) {
		return m, runMixed(ctx, eng, m, builds, src, progress)
	}
	return m, nil
}

// runMixed adds a column per mixed pair whose two builds are among
// builds and both here.
func runMixed(ctx context.Context, eng *topology.Engine, m *Matrix, builds []topology.Build, src topology.Sources, progress io.Writer) error {
	byName := map[string]topology.Build{}
	for _, b := range builds {
		byName[b.Name] = b
	}
	for _, pair := range MixedPairs {
		pb, ok1 := byName[pair.Primary]
		rb, ok2 := byName[pair.Replica]
		if !ok1 || !ok2 {
			continue
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		col := Column{Server: pair.Primary, Topology: MixedTopology(pair.Replica)}
		pimg, perr := eng.Obtain(ctx, pb, src, progress)
		rimg, rerr := eng.Obtain(ctx, rb, src, progress)
		if err := errors.Join(perr, rerr); err != nil {
			col.Status, col.Reason = "unavailable", err.Error()
			m.Columns = append(m.Columns, col)
			continue
		}
		col.Image = pimg.Ref + ", " + MixedReplica + ": " + rimg.Ref
		fmt.Fprintf(progress, "%s %s:\n", pair.Primary, col.Topology)
		cells, version, err := observeMixed(ctx, eng, pb, pimg.Ref, rimg.Ref, pair.Replica, progress)
		col.Version, col.Status = version, "observed"
		if err != nil {
			col.Status, col.Reason = "error", err.Error()
			fmt.Fprintf(progress, "  error: %v\n", err)
		}
		m.Columns = append(m.Columns, col)
		m.Cells = append(m.Cells, cells...)
	}
	return nil
}

func observeMixed(ctx context.Context, eng *topology.Engine, b topology.Build, image, replicaImage, replicaBuild string, progress io.Writer) ([]Cell, string, error) {
	return observeOn(ctx, eng, b, image, topology.Replicated, MixedOptions(replicaImage), func(t *topology.Topology) ([]Cell, error) {
		return ObserveMixed(ctx, t, replicaBuild, progress)
	})
}

func observeOne(ctx context.Context, eng *topology.Engine, b topology.Build, image string, kind topology.Kind, progress io.Writer) ([]Cell, string, error) {
	return observeOn(ctx, eng, b, image, kind, Options(), func(t *topology.Topology) ([]Cell, error) {
		return Observe(ctx, t, progress)
	})
}

// observeOn starts a topology, observes it and removes it.
func observeOn(ctx context.Context, eng *topology.Engine, b topology.Build, image string, kind topology.Kind, opts topology.Options, observe func(*topology.Topology) ([]Cell, error)) ([]Cell, string, error) {
	t, err := topology.Start(ctx, eng, b, kind, topology.WithImage(image), topology.WithOptions(opts))
	if err != nil {
		return nil, "", err
	}
	defer func() {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
		defer cancel()
		t.Terminate(cctx)
	}()
	cells, err := observe(t)
	return cells, t.Version, err
}

func unavailableCells(b topology.Build, kind topology.Kind, reason string) []Cell {
	var cells []Cell
	for _, cs := range Cases() {
		if cs.Applies(kind) {
			cells = append(cells, Cell{Server: b.Name, Topology: string(kind), Case: cs.Name, Outcome: Unavailable, Observed: reason})
		}
	}
	return cells
}
