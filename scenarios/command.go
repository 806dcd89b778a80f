package scenarios

import "strings"

// Args are the lockcheck run flags that make s, one row of the table of
// settings after another: every field set in s (its zero fields are left
// to their defaults, None shares are written 0), so a table can show the
// command that reproduces its row. The CLI's test parses them back and
// compares (cmd/lockcheck, TestScenarioArgs).
func (s Scenario) Args() []string {
	var out []string
	for _, st := range Settings() {
		out = append(out, st.args(s)...)
	}
	return out
}

// Command is lockcheck run with s's flags, as one line.
func (s Scenario) Command() string {
	return "lockcheck run " + strings.Join(s.Args(), " ")
}
