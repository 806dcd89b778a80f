package scenarios

import (
	"fmt"
	"time"
)

// The bounds on a run's size: what one machine's topology can serve. A
// run's clients are workers on this machine, each with its own connections
// to the servers, which run here too; its keys are locks the observer reads
// and the checker models one by one, and with at most MaxClients workers
// more keys than that are never contended. Past these a run would spend
// the machine's memory before its first server started.
const (
	MaxClients = 1000
	MaxKeys    = 10000
)

// validateSize refuses counts out of bounds and negative durations, before
// anything is sized by them.
func (s Scenario) validateSize() error {
	switch {
	case s.Clients < 1 || s.Clients > MaxClients:
		return fmt.Errorf("%d clients: want 1 to %d (each is a worker with its own connections to the servers, all on this machine): give fewer with --clients", s.Clients, MaxClients)
	case s.Keys < 1 || s.Keys > MaxKeys:
		return fmt.Errorf("%d keys: want 1 to %d (each is a lock the observer reads and the checker models; past %d clients more keys are never contended): give fewer with --keys", s.Keys, MaxKeys, MaxClients)
	}
	for _, d := range []struct {
		name string
		d    time.Duration
	}{
		{"duration", s.Duration}, {"ttl", s.TTL}, {"work-min", s.WorkMin}, {"work-max", s.WorkMax},
		{"backoff-min", s.BackoffMin}, {"backoff-max", s.BackoffMax}, {"write-gap", s.WriteGap}, {"fence-gap", s.FenceGap},
		{"tolerance", s.ClockTolerance}, {"call-timeout", s.CallTimeout},
	} {
		if d.d < 0 {
			return fmt.Errorf("%s %s: want a positive duration (--%s)", d.name, d.d, d.name)
		}
	}
	if s.ObserveEvery < 0 && s.ObserveEvery != None {
		return fmt.Errorf("observe-every %s: want a positive duration, or %s for none", s.ObserveEvery, time.Duration(None))
	}
	return nil
}
