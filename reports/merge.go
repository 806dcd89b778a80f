package reports

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
)

// LoadIndex reads a matrix folder's matrix.json, with each run's
// result.json (for the JUnit file).
func LoadIndex(dir string) (*Index, error) {
	var idx Index
	if err := ReadJSON(filepath.Join(dir, "matrix.json"), &idx); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("%s is not a matrix folder: it has no matrix.json", dir)
		}
		return nil, err
	}
	for i := range idx.Cells {
		c := &idx.Cells[i]
		if c.Dir == "" || c.Verdict == "" {
			continue
		}
		if rr, err := LoadRunResult(filepath.Join(dir, c.Dir, "result.json")); err == nil {
			c.Result = &rr
		}
	}
	return &idx, nil
}

// MergeIndexes joins the indexes of a sharded matrix's parts into the
// whole matrix's: the same seed, duration, TTL, columns and rows in every
// part, and each runnable cell run by exactly one. A cell's replay
// command is made by replay from the cell's folder.
func MergeIndexes(parts []*Index, replay func(dir string) string) (*Index, error) {
	if len(parts) == 0 {
		return nil, fmt.Errorf("nothing to merge")
	}
	first := parts[0]
	merged := *first
	merged.Cells = slices.Clone(first.Cells)
	merged.Columns = slices.Clone(first.Columns)
	merged.Shard, merged.Shards = 0, len(parts)
	merged.Complete = true
	from := make([]int, len(merged.Cells)) // which part ran each cell, -1 for none
	for i := range from {
		from[i] = -1
	}
	for p, idx := range parts {
		if idx.Seed != first.Seed || idx.Duration != first.Duration || idx.TTL != first.TTL ||
			!slices.Equal(idx.Rows, first.Rows) || len(idx.Columns) != len(first.Columns) || len(idx.Cells) != len(first.Cells) {
			return nil, fmt.Errorf("part %d is not a shard of the same matrix as part 1 (seed, duration, TTL, builds, topologies, clients and faults must match)", p+1)
		}
		if idx.Shards != len(parts) {
			return nil, fmt.Errorf("part %d is shard %d of %d, but %d parts were given: give every shard once", p+1, idx.Shard, idx.Shards, len(parts))
		}
		merged.Complete = merged.Complete && idx.Complete
		for i, c := range idx.Cells {
			m := &merged.Cells[i]
			if c.Server != m.Server || c.Topology != m.Topology || c.Client != m.Client || c.Fault != m.Fault {
				return nil, fmt.Errorf("part %d's cell %d is %s %s %s %s, not %s %s %s %s", p+1, i, c.Server, c.Topology, c.Client, c.Fault, m.Server, m.Topology, m.Client, m.Fault)
			}
			if c.Outcome == CellOtherShard {
				continue
			}
			if c.Seed != 0 && m.Seed != 0 && c.Seed != m.Seed {
				return nil, fmt.Errorf("cell %s %s %s %s has seed %d in part %d and %d in part %d", c.Server, c.Topology, c.Client, c.Fault, c.Seed, p+1, m.Seed, from[i]+1)
			}
			if c.Dir != "" && from[i] >= 0 {
				return nil, fmt.Errorf("cell %s %s %s %s was run by parts %d and %d", c.Server, c.Topology, c.Client, c.Fault, from[i]+1, p+1)
			}
			*m = c
			if c.Dir != "" {
				from[i] = p
			}
		}
		for i, col := range idx.Columns {
			if merged.Columns[i].Version == "" {
				merged.Columns[i].Version = col.Version
			}
		}
	}
	for i := range merged.Cells {
		c := &merged.Cells[i]
		if c.Outcome == CellOtherShard {
			return nil, fmt.Errorf("no part ran cell %s %s %s %s: give every shard's folder", c.Server, c.Topology, c.Client, c.Fault)
		}
		if c.Dir != "" && replay != nil {
			c.Replay = replay(c.Dir)
		}
	}
	return &merged, nil
}
