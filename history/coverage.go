package history

import "fmt"

// Coverage is what a run exercised: how many holds, how many acquires
// met a held lock, extends, stalls and pauses, and how many of its
// planned fault steps ran. A run that ended early once it had covered
// its goal (Covered) is as strong as the figures say, not weaker for
// being short.
type Coverage struct {
	Holds     int64 `json:"holds"`
	Contended int64 `json:"contended"`
	Extends   int64 `json:"extends"`
	Stalls    int64 `json:"stalls"`
	Pauses    int64 `json:"pauses"`
	Faults    int   `json:"faults"`
	Planned   int   `json:"planned_faults"`
	// HoldsAfterFaults counts the holds that began once every fault step
	// was over: the lock went on being handed out after the last fault.
	HoldsAfterFaults int64 `json:"holds_after_faults"`
	// Covered says the run met its goal and ended there, before its
	// duration (--until-covered).
	Covered bool `json:"covered,omitempty"`
}

func (c Coverage) String() string {
	holds := fmt.Sprintf("%d holds", c.Holds)
	if c.Planned > 0 {
		holds += fmt.Sprintf(" (%d after the faults)", c.HoldsAfterFaults)
	}
	return fmt.Sprintf("%s, %d contended acquires, %d extends, %d stalls, %d pauses, %d of %d fault steps",
		holds, c.Contended, c.Extends, c.Stalls, c.Pauses, c.Faults, c.Planned)
}
