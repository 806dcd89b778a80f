package reports

import (
	"fmt"
	"slices"
	"strings"

	"github.com/lockcheck/lockcheck/checker"
	"github.com/lockcheck/lockcheck/history"
)

// Step is one step of a rolling upgrade: the window the step was, every
// server as it left them, and what the checks found inside it. It is
// the step table of report.html and result.json.
type Step struct {
	Detail string `json:"detail"`
	Target string `json:"target,omitempty"`
	// Start and End are the window's bounds on the run's clock (ns).
	Start int64               `json:"start"`
	End   int64               `json:"end"`
	Nodes []history.NodeState `json:"nodes"`
	// Lacking names the servers that can lead (serve as primary, or be
	// promoted) and lack some of the client's lock commands, each with
	// what it lacks: where a failover can leave the client unable to
	// release.
	Lacking []string `json:"lacking,omitempty"`
	// Probed says the client's commands were probed on every server.
	Probed bool `json:"probed"`
	// Links lists the replicas whose link to their primary is not up.
	Links []string `json:"links_down,omitempty"`
	// Behind lists the replicas that lack one of the client's commands
	// their primary accepts: a command the primary feeds them verbatim
	// (SET IFEQ without an expiry, or with KEEPTTL) is refused there and
	// the replica keeps the old value while its link stays up (compat's
	// mixed/ cells); DELIFEQ is fed as DEL and SET IFEQ with PX as SET
	// PXAT, which every build applies.
	Behind []string `json:"behind,omitempty"`
	// Found counts each check's failing findings that overlap the step.
	Found map[string]int `json:"found,omitempty"`
}

// Steps makes the step table from the windows that recorded servers
// (rolling-upgrade's) and the checks' counts per window.
func Steps(h *history.History, checks checker.Checks) []Step {
	var out []Step
	for _, f := range h.Faults {
		if f.Nodes == nil {
			continue
		}
		st := Step{Detail: f.Detail, Target: f.Target, Start: f.Start, End: f.End, Nodes: f.Nodes, Probed: true}
		for _, n := range f.Nodes {
			if !n.Probed {
				st.Probed = false
			}
			if n.CanLead && len(n.Missing) > 0 {
				st.Lacking = append(st.Lacking, fmt.Sprintf("%s (%s) lacks %s", n.Name, n.Version, strings.Join(n.Missing, ", ")))
			}
			if n.Role == "replica" && n.Link != "up" {
				st.Links = append(st.Links, fmt.Sprintf("%s: %s", n.Name, n.Link))
			}
		}
		st.Behind = behind(f.Nodes)
		for _, c := range checks {
			if k := c.InWindows[f.Start]; k > 0 {
				if st.Found == nil {
					st.Found = map[string]int{}
				}
				st.Found[c.Name] = k
			}
		}
		out = append(out, st)
	}
	return out
}

// fedVerbatim are the client commands (lockclient's capability names) a
// primary may feed its replicas as sent: SET IFEQ without an expiry or
// with KEEPTTL. DELIFEQ goes as DEL, scripts as their effects.
var fedVerbatim = []string{"SET IFEQ"}

// behind lists the replicas lacking a command their primary has and
// feeds as sent.
func behind(nodes []history.NodeState) []string {
	byName := map[string]history.NodeState{}
	for _, n := range nodes {
		byName[n.Name] = n
	}
	var out []string
	for _, n := range nodes {
		p, ok := byName[n.Following]
		if n.Role != "replica" || !ok || !n.Probed || !p.Probed {
			continue
		}
		var lacks []string
		for _, m := range n.Missing {
			if slices.Contains(fedVerbatim, m) && !slices.Contains(p.Missing, m) {
				lacks = append(lacks, m)
			}
		}
		if len(lacks) > 0 {
			out = append(out, fmt.Sprintf("%s (%s) lacks %s, which its primary %s (%s) accepts", n.Name, n.Version, strings.Join(lacks, ", "), p.Name, p.Version))
		}
	}
	return out
}

// Understood says what the step table's "client's commands" column
// shows.
func (s Step) Understood() string {
	switch {
	case len(s.Lacking) > 0:
		return strings.Join(s.Lacking, "; ")
	case !s.Probed:
		return "not probed"
	}
	return "every node that can lead has them"
}

// NodeLine is one server in a step's row.
func NodeLine(n history.NodeState) string {
	if n.Error != "" && n.Version == "" {
		return n.Name + ": " + n.Error
	}
	s := fmt.Sprintf("%s %s %s", n.Name, n.Version, n.Role)
	if n.Role == "replica" {
		s += fmt.Sprintf(" of %s, link %s", n.Following, n.Link)
	}
	return s
}
