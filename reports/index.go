package reports

import "fmt"

// Index is a lockcheck matrix: one chaos run per client × fault on every
// build × topology. WriteIndex renders it as index.html, matrix.json and
// junit.xml.
type Index struct {
	Generated string `json:"generated"`
	// Seed is the matrix's seed; every cell's run derives its own from it.
	Seed     int64  `json:"seed"`
	Duration string `json:"duration"`
	TTL      string `json:"ttl"`
	Elapsed  string `json:"elapsed"`
	// Complete is false while the matrix runs and after it was stopped.
	Complete bool `json:"complete"`
	// Shard and Shards say which part of a sharded matrix this index
	// shows (Shards 0: the whole matrix; after a merge, the shards joined).
	Shard   int           `json:"shard,omitempty"`
	Shards  int           `json:"shards,omitempty"`
	Columns []IndexColumn `json:"columns"`
	Rows    []IndexRow    `json:"rows"`
	Cells   []IndexCell   `json:"cells"`
}

// IndexColumn is one build on one topology.
type IndexColumn struct {
	Server   string `json:"server"`
	Topology string `json:"topology"`
	// Version is what the servers reported, once a run has started.
	Version string `json:"version,omitempty"`
	// Reason says why the build is unavailable ("" when it is not).
	Reason string `json:"reason,omitempty"`
}

// IndexRow is one client under one fault.
type IndexRow struct {
	Client string `json:"client"`
	Fault  string `json:"fault"`
}

// AsExpected counts the cells with an expectation and a finished run, and
// those of them that show it.
func (idx *Index) AsExpected() (as, of int) {
	for _, c := range idx.Cells {
		if ok, has := c.AsExpected(); has {
			of++
			if ok {
				as++
			}
		}
	}
	return as, of
}

// Unexpected lists the cells with a finished run that does not show what
// was expected, each in one line with the reason when one is known.
func (idx *Index) Unexpected() []string {
	var out []string
	for _, c := range idx.Cells {
		if ok, has := c.AsExpected(); has && !ok {
			line := fmt.Sprintf("%s %s %s under %s: %s, expected %s", c.Server, c.Topology, c.Client, c.Fault, c.Outcome.Label(), c.Expected.Label())
			if c.Reason != "" {
				line += " (" + c.Reason + ")"
			}
			out = append(out, line)
		}
	}
	return out
}

// JUnit is the whole matrix as one JUnit report, one suite per cell.
func (idx *Index) JUnit() *JUnit {
	j := &JUnit{Name: "lockcheck matrix"}
	for _, c := range idx.Cells {
		if s, ok := c.Suite(); ok {
			j.Add(s)
		}
	}
	return j
}

// Count counts the cells with an outcome.
func (idx *Index) Count(o CellOutcome) int {
	n := 0
	for _, c := range idx.Cells {
		if c.Outcome == o {
			n++
		}
	}
	return n
}
