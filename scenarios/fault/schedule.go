package fault

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/lockcheck/lockcheck/scenarios/internal/pace"
)

// Event is one planned fault: which, on which key's primary, and when,
// relative to the run's start.
type Event struct {
	At    time.Duration `json:"at"`
	Fault string        `json:"fault"`
	Key   string        `json:"key"`
}

// Schedule plans faults from a seed: the same seed, faults, keys, duration
// and TTL give the same kinds, targets and times. The first fault comes
// after a warm-up; one fault per period, each at a jittered offset.
func Schedule(seed int64, faults []Fault, keys []string, duration, ttl time.Duration) []Event {
	if len(faults) == 0 || len(keys) == 0 {
		return nil
	}
	r := rand.New(rand.NewPCG(uint64(seed), 0x5eed_fa17))
	warmup := 3 * time.Second
	period := max(10*time.Second, 2*ttl)
	// Leave time after the last fault for its effects to show.
	last := duration - min(ttl, 5*time.Second)
	var out []Event
	for at := warmup; at < last; at += period {
		jitter := time.Duration(r.Int64N(int64(period / 4)))
		if at+jitter >= last {
			break
		}
		out = append(out, Event{
			At:    at + jitter,
			Fault: faults[r.IntN(len(faults))].Name(),
			Key:   keys[r.IntN(len(keys))],
		})
	}
	return out
}

// RunSchedule injects each event at its time (or as soon as the one before
// it is over) until the events or ctx run out. Events name their fault
// among faults, the list the schedule was drawn from. done is told each
// outcome.
func RunSchedule(ctx context.Context, start time.Time, events []Event, faults []Fault, env Env, done func(Event, error)) {
	for _, ev := range events {
		if err := pace.Hold(ctx, time.Until(start.Add(ev.At))); err != nil {
			return
		}
		err := fmt.Errorf("fault %q is not among the run's faults", ev.Fault)
		if i := slices.IndexFunc(faults, func(f Fault) bool { return f.Name() == ev.Fault }); i >= 0 {
			e := env
			e.Key = ev.Key
			err = faults[i].Inject(ctx, e)
		}
		if done != nil {
			done(ev, err)
		}
		if ctx.Err() != nil {
			return
		}
	}
}

// String is the event as lockcheck run's --fault-at takes it:
// FAULT@OFFSET@KEY.
func (e Event) String() string {
	return fmt.Sprintf("%s@%s@%s", e.Fault, e.At, e.Key)
}

// ParseEvent reads FAULT@OFFSET[@KEY] (the key defaults to firstKey), as
// String writes it.
func ParseEvent(text, firstKey string) (Event, error) {
	parts := strings.SplitN(text, "@", 3)
	if len(parts) < 2 {
		return Event{}, fmt.Errorf("fault step %q: want FAULT@OFFSET[@KEY], e.g. kill-primary@3s", text)
	}
	if _, err := Lookup(parts[0]); err != nil {
		return Event{}, err
	}
	at, err := time.ParseDuration(parts[1])
	if err != nil || at < 0 {
		return Event{}, fmt.Errorf("fault step %q: offset %q is not a duration from the run's start, e.g. 3s", text, parts[1])
	}
	e := Event{Fault: parts[0], At: at, Key: firstKey}
	if len(parts) == 3 && parts[2] != "" {
		e.Key = parts[2]
	}
	return e, nil
}
