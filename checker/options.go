package checker

import (
	"fmt"
	"github.com/lockcheck/lockcheck/history"
	"time"
)

// LossPolicy says when the lock model lets a key lose its state: a failover
// that promotes a replica which never got the lock (or the release), or a
// restart without persistence. A correct server does that under such faults,
// so it is not an illegal history; the double-holder and fence checks still
// see what it did to the clients.
type LossPolicy string

const (
	// LossDuringFaults: in any fault window, and for FaultGrace after it.
	LossDuringFaults LossPolicy = "faults"
	// LossNever: the key keeps its state; for runs on one server without
	// restarts.
	LossNever LossPolicy = "never"
	// LossAnytime: the key may lose its state at any time (an unknown
	// topology); linearizability then checks little, and segments are not
	// cut, so it is slow on long histories.
	LossAnytime LossPolicy = "anytime"
)

// Options tune the checks. The zero value is usable: zero fields take the
// defaults documented on each field. In JSON (a saved history's sidecar,
// result.json) durations are nanoseconds.
type Options struct {
	// ClockTolerance is how far the server's expiry may run ahead of the
	// harness clock: a lease set at t with TTL d may end from t+d-tolerance
	// on. Valkey keeps PX deadlines in whole milliseconds of its wall clock,
	// so this must be at least a millisecond. Default 10 ms.
	ClockTolerance time.Duration `json:"clock_tolerance_ns,omitempty"`
	// Timeout bounds porcupine's search over all segments together; a
	// segment not decided in time makes linearizability "unknown", never
	// "pass". Default 60 s. Negative: skip the linearizability check.
	Timeout time.Duration `json:"timeout_ns,omitempty"`
	// AllowDoubleHolders reports double holders without making the verdict
	// "violated": a fenced client under failover may see them, and its
	// fence must keep the resource safe (fence and resource findings still
	// count).
	AllowDoubleHolders bool `json:"allow_double_holders,omitempty"`
	// AllowedBecause says why double holders are allowed (OptionsFor
	// fills it), for the reports.
	AllowedBecause string `json:"allowed_because,omitempty"`
	// Loss says when a key may lose its state. Default LossDuringFaults.
	Loss LossPolicy `json:"loss,omitempty"`
	// LossFaults restricts LossDuringFaults to fault windows with these
	// names; empty means every fault.
	LossFaults []string `json:"loss_faults,omitempty"`
	// FaultGrace extends each fault window for loss: a Sentinel promotes a
	// replica seconds after the primary stopped. Default 5 s.
	FaultGrace time.Duration `json:"fault_grace_ns,omitempty"`
	// MaxFindings caps the findings listed per check; Count still counts
	// all of them. Default 100.
	MaxFindings int `json:"max_findings,omitempty"`
	// PictureOps bounds the operations the linearizability picture keeps
	// (Result.Picture). Default DefaultPictureOps; negative: no picture.
	PictureOps int `json:"picture_ops,omitempty"`
	// Workers bounds the parallel segment checks. Default GOMAXPROCS.
	Workers int `json:"workers,omitempty"`
	// Skip names checks not to run; they are reported as "skipped".
	Skip []string `json:"skip,omitempty"`
	// Majority says the client locks a majority of independent servers
	// (Redlock; OptionsFor sets it for a redlock topology). Its lock is
	// no one register, so linearizability is skipped; its own validity
	// check decides whether a grant is a hold, so an OK returned after
	// the lease it asked for is a finding (late_grant); and a refused
	// acquire is no sign that the key is held (contenders that split the
	// nodes are all refused), so no key is judged stuck.
	Majority bool `json:"majority,omitempty"`

	// failingPictureOnly: a picture of passing partitions is drawn
	// already (RunFile's later groups).
	failingPictureOnly bool
}

// OptionsFor are the options a recorded run is checked with, decided here
// once for every caller (lockcheck run and check, the matrix, the suites,
// the measurements): a client that draws fences (its kind says so, or its
// acquires return fences) may see double holders
// under faults, the article's failover race, and its fence must stop the
// stale holder; a client that draws none may not see any.
func OptionsFor(h *history.History) Options {
	return optionsFor(h.Meta.Fenced || acquiresDrawFences(h), h.Meta.Topology)
}

// redlockTopology is the topology kind of independent primaries, as a
// history's meta names it.
const redlockTopology = "redlock"

func optionsFor(fenced bool, topology string) Options {
	var o Options
	if fenced {
		o = Options{AllowDoubleHolders: true,
			AllowedBecause: "the client draws fences: two holders under a fault are allowed, and the fence check must stop the stale one"}
	}
	if topology == redlockTopology {
		o.Majority = true
		o.Skip = append(o.Skip, Linearizability)
	}
	return o
}

// acquiresDrawFences says whether an acquire returned a fence: how a
// history whose metadata was written before the client said so (an
// external adapter, a run cut short before history.json) shows a fenced
// client.
func acquiresDrawFences(h *history.History) bool {
	for i := range h.Ops {
		if op := &h.Ops[i]; op.Kind == history.Acquire && op.Outcome == history.OK && op.HasFence {
			return true
		}
	}
	return false
}

// Default values for Options fields left zero.
const (
	DefaultClockTolerance = 10 * time.Millisecond
	DefaultTimeout        = 60 * time.Second
	DefaultFaultGrace     = 5 * time.Second
	DefaultMaxFindings    = 100
)

// withDefaults fills zero fields and rejects values that make no sense.
func (o Options) withDefaults() (Options, error) {
	if o.ClockTolerance == 0 {
		o.ClockTolerance = DefaultClockTolerance
	}
	if o.ClockTolerance < 0 {
		return o, fmt.Errorf("clock tolerance %v is negative", o.ClockTolerance)
	}
	if o.Timeout == 0 {
		o.Timeout = DefaultTimeout
	}
	if o.Loss == "" {
		o.Loss = LossDuringFaults
	}
	switch o.Loss {
	case LossDuringFaults, LossNever, LossAnytime:
	default:
		return o, fmt.Errorf("loss policy %q: want %q, %q or %q", o.Loss, LossDuringFaults, LossNever, LossAnytime)
	}
	if o.FaultGrace == 0 {
		o.FaultGrace = DefaultFaultGrace
	}
	if o.FaultGrace < 0 {
		return o, fmt.Errorf("fault grace %v is negative", o.FaultGrace)
	}
	if o.MaxFindings <= 0 {
		o.MaxFindings = DefaultMaxFindings
	}
	if o.PictureOps == 0 {
		o.PictureOps = DefaultPictureOps
	}
	for _, s := range o.Skip {
		if !knownCheck(s) {
			return o, fmt.Errorf("skip %q: no such check (have %v)", s, CheckNames)
		}
	}
	return o, nil
}

func (o Options) skips(name string) bool {
	for _, s := range o.Skip {
		if s == name {
			return true
		}
	}
	return false
}
