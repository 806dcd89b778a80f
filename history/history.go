// Package history is the record of one lockcheck run: every lock operation
// and resource write with call and return times from one monotonic clock, the
// fault windows, and the run's metadata. Scenarios write it, the checker and
// the reports read it, and it is JSON on disk so a run can be checked again
// offline.
//
// This package holds the types, the Recorder and the writing of the JSON
// (Save, the run's stream, SaveStream): the Recorder streams every
// operation as it returns, so the encoder lives beside it. Reading the
// files back is history/historyjson, and importing another tool's
// history is history/jepsen; both import this package, never the
// reverse.
package history

import (
	"encoding/json"
	"sort"
)

// Kind names what an operation did.
type Kind string

const (
	// Acquire takes the lock (SET NX PX or a client's equivalent).
	Acquire Kind = "acquire"
	// Extend moves the lease's end (SET IFEQ PX or a script).
	Extend Kind = "extend"
	// Release gives the lock up (DELIFEQ, DELEX, a script, or a buggy DEL).
	Release Kind = "release"
	// Write is a write to the protected resource by a client that believes
	// it holds the lock.
	Write Kind = "write"
)

// Outcome is what a client learned from an operation.
type Outcome string

const (
	// OK: the operation took effect (acquired, extended, released, or the
	// resource accepted the write).
	OK Outcome = "ok"
	// Fail: the operation certainly did not take effect (nil, 0, an error
	// reply, or the resource rejected the write).
	Fail Outcome = "fail"
	// Unknown: a timeout or a broken connection; the operation may or may
	// not have taken effect. The client goes on under a new client id.
	Unknown Outcome = "unknown"
)

// Op is one operation as a client saw it. Times are nanoseconds since the
// run's start on the harness's monotonic clock. For an Unknown outcome,
// Return is when the harness gave up waiting; checkers treat it as infinity.
type Op struct {
	// Client is the porcupine client id: one open operation at a time.
	Client int `json:"client"`
	// Worker is the logical worker; it keeps its number when Client changes.
	Worker int    `json:"worker"`
	Key    string `json:"key"`
	Kind   Kind   `json:"kind"`
	// Token is the value stored in the lock key by this acquisition.
	Token string `json:"token,omitempty"`
	// TTLms is the lease asked for by an acquire or extend.
	TTLms int64 `json:"ttl_ms,omitempty"`
	// Fence is the fencing token drawn by an acquire, or presented with a
	// write. HasFence says whether there is one (0 is a valid fence).
	Fence    int64 `json:"fence,omitempty"`
	HasFence bool  `json:"has_fence,omitempty"`
	// Read and Wrote are the unfenced resource's counter before and after a
	// read-modify-write; a lost increment shows as Read != the last Wrote.
	Read  int64 `json:"read,omitempty"`
	Wrote int64 `json:"wrote,omitempty"`
	// Aside marks a command the client ran on its own, outside any call of
	// its worker (valkeylock's background renewal, or the delete it runs
	// when one fails or its lease lapses): it sets or ends the lease, but
	// tells the holder nothing, so it begins no belief.
	Aside bool `json:"aside,omitempty"`
	// Outcome, with the server's error text or the reason for Unknown.
	Outcome Outcome `json:"outcome"`
	Error   string  `json:"error,omitempty"`
	Call    int64   `json:"call"`
	Return  int64   `json:"return"`
}

// Fault is a window during which a fault was active. End is 0 while it is
// still active when the run stops; checkers treat that as the run's end.
type Fault struct {
	Name   string `json:"name"`
	Target string `json:"target,omitempty"`
	Detail string `json:"detail,omitempty"`
	Start  int64  `json:"start"`
	End    int64  `json:"end"`
	// Promoted is the node that the fault made the key's primary, and
	// PromotedAt when it was first seen serving as one: an OK after it
	// came from that node, which explanations say.
	Promoted   string `json:"promoted,omitempty"`
	PromotedAt int64  `json:"promoted_at,omitempty"`
	// Unmet, when set, says why the fault could not make its moment (a
	// lock on the primary alone, a second holder within the first's
	// lease): a run that shows nothing then did not reproduce the race,
	// and its verdict says so instead of safe.
	Unmet string `json:"unmet,omitempty"`
	// Nodes, for a step of a rolling upgrade, is every server as the step
	// left it.
	Nodes []NodeState `json:"nodes,omitempty"`
}

// NodeState is one server as an upgrade step left it: a row of the step
// table.
type NodeState struct {
	Name string `json:"name"`
	// Version is what the server reports (INFO server).
	Version string `json:"version,omitempty"`
	// Role is primary or replica; Link a replica's master_link_status
	// (up, down) and Following the primary it follows.
	Role      string `json:"role,omitempty"`
	Link      string `json:"link,omitempty"`
	Following string `json:"following,omitempty"`
	// CanLead says the node serves as a primary or is a replica its
	// topology may promote (Sentinel, cluster failover).
	CanLead bool `json:"can_lead,omitempty"`
	// Missing lists the client's lock commands the node lacks, probed on
	// the node itself; Probed says they were (false for a client whose
	// needs are not known, or a node that did not answer).
	Missing []string `json:"missing,omitempty"`
	Probed  bool     `json:"probed,omitempty"`
	// Error says why the node could not be read (not running, no reply).
	Error string `json:"error,omitempty"`
}

// Meta describes the run that produced a history.
type Meta struct {
	Server   string   `json:"server"`
	Version  string   `json:"version"`
	Topology string   `json:"topology"`
	Client   string   `json:"client"`
	Seed     int64    `json:"seed"`
	TTLms    int64    `json:"ttl_ms"`
	Clients  int      `json:"clients"`
	Keys     int      `json:"keys"`
	Fenced   bool     `json:"fenced"`
	Faults   []string `json:"faults,omitempty"`
	// Started is the wall-clock start in RFC 3339, for people only.
	Started string `json:"started,omitempty"`
	// DurationNs is the run's length on the monotonic clock.
	DurationNs int64 `json:"duration_ns"`
	// Partial marks a history rebuilt from the stream of a run that did
	// not finish (historyjson.LoadStream): its verdict covers what was recorded.
	Partial bool `json:"partial,omitempty"`
	// Coverage is what the workload exercised (absent in histories
	// written before it was kept).
	Coverage *Coverage `json:"coverage,omitempty"`
}

// Format is the version of history.json this build writes: 2 added
// "format" and "scenario".
const Format = 2

// History is a whole run.
type History struct {
	// Format is the file's version (1 when absent).
	Format int  `json:"format,omitempty"`
	Meta   Meta `json:"meta"`
	// Scenario is the run's scenario as scenario.json has it (its type is
	// the scenarios package's, which writes histories).
	Scenario json.RawMessage `json:"scenario,omitempty"`
	Ops      []Op            `json:"ops"`
	Faults   []Fault         `json:"faults"`
}

// Sort orders operations by call time, then client, so that a history
// written by concurrent clients reads in time order.
func (h *History) Sort() {
	sort.SliceStable(h.Ops, func(i, j int) bool {
		if h.Ops[i].Call != h.Ops[j].Call {
			return h.Ops[i].Call < h.Ops[j].Call
		}
		return h.Ops[i].Client < h.Ops[j].Client
	})
}

// End is the last instant the history speaks of: the run's duration, or the
// latest return or fault time when that is later.
func (h *History) End() int64 {
	end := h.Meta.DurationNs
	for _, op := range h.Ops {
		end = max(end, op.Return, op.Call)
	}
	for _, f := range h.Faults {
		end = max(end, f.Start, f.End)
	}
	return end
}
