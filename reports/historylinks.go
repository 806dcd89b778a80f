package reports

import (
	"os"
	"path/filepath"
	"slices"
)

// LinkedFrom is the table as a page elsewhere than the measurement's
// folder shows it: every link to a kept history (a run's, a row's worst
// run) made a path from the page's folder to the first of dirs that holds
// the file. A measurement's histories are named relative to its folder,
// so a table spliced into docs/ (or merged from shards kept in docs/)
// would link nowhere without it. A history no dir holds (a shard copied
// into the docs with only the histories its own table linked) loses its
// link rather than point at nothing. c is left as it is: each page gets
// its own copy.
func (c *Claims) LinkedFrom(page string, dirs []string) *Claims {
	from := filepath.Dir(page)
	link := func(h string) string {
		if h == "" {
			return h
		}
		for _, d := range dirs {
			p := filepath.Join(d, filepath.FromSlash(h))
			if _, err := os.Stat(p); err != nil {
				continue
			}
			if rel, err := filepath.Rel(from, p); err == nil {
				return filepath.ToSlash(rel)
			}
		}
		return ""
	}
	out := *c
	out.Rows, out.Mutants = linkRows(c.Rows, link), linkRows(c.Mutants, link)
	return &out
}

func linkRows(rows []ClaimRow, link func(string) string) []ClaimRow {
	rows = slices.Clone(rows)
	for i := range rows {
		rows[i].Card.WorstRun = link(rows[i].Card.WorstRun)
		rows[i].Details = slices.Clone(rows[i].Details)
		for j := range rows[i].Details {
			rows[i].Details[j].History = link(rows[i].Details[j].History)
		}
	}
	return rows
}
