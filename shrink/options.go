package shrink

import (
	"io"
	"time"

	"github.com/lockcheck/lockcheck/topology"
)

// Options bound a shrink: where it writes, how long it may take, and
// how sure each step must be.
type Options struct {
	// Out receives the reproducer's run folder, shrink.json and, while it
	// works, tries/ (removed at the end).
	Out     string
	Sources topology.Sources
	// Budget bounds the whole shrink, confirmation included (default 10
	// minutes): the search stops early enough to leave the confirmation
	// its time, and the confirmation stops at the budget.
	Budget time.Duration
	// Tries is how many runs in a row must show the kind before a cut is
	// kept (default 3): one lucky run does not make a reproducer.
	Tries int
	// Confirm and Need: the reproducer is replayed Confirm times at the
	// end and must show the kind in at least Need of them (10 and 9).
	Confirm, Need int
	// Kind is the finding kind to keep (default: the first of the
	// original run's failing kinds, double_holder when it is one).
	Kind string
	// Progress gets a line per run.
	Progress io.Writer
}

func (o Options) withDefaults() Options {
	if o.Budget <= 0 {
		o.Budget = 10 * time.Minute
	}
	if o.Tries <= 0 {
		o.Tries = 3
	}
	if o.Confirm <= 0 {
		o.Confirm = 10
	}
	if o.Need <= 0 {
		o.Need = o.Confirm - o.Confirm/10
	}
	if o.Progress == nil {
		o.Progress = io.Discard
	}
	return o
}
