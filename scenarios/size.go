package scenarios

import (
	"fmt"
	"strings"
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

// The checks of one setting alone (Setting.Check). Validate runs them
// first: what follows sizes things by these (LockKeys).

func checkClients(_ Setting, s Scenario) error {
	if s.Clients < 1 || s.Clients > MaxClients {
		return fmt.Errorf("%d clients: want 1 to %d (each is a worker with its own connections to the servers, all on this machine): give fewer with --clients", s.Clients, MaxClients)
	}
	return nil
}

func checkKeys(_ Setting, s Scenario) error {
	if s.Keys < 1 || s.Keys > MaxKeys {
		return fmt.Errorf("%d keys: want 1 to %d (each is a lock the observer reads and the checker models; past %d clients more keys are never contended): give fewer with --keys", s.Keys, MaxKeys, MaxClients)
	}
	return nil
}

// checkNotNegative refuses a negative duration.
func checkNotNegative(st Setting, s Scenario) error {
	if d := time.Duration(st.field(&s).Int()); d < 0 {
		return fmt.Errorf("%s %s: want a positive duration (--%s)", st.Flag, d, st.Flag)
	}
	return nil
}

// checkInterval refuses a negative interval other than None.
func checkInterval(st Setting, s Scenario) error {
	if d := time.Duration(st.field(&s).Int()); d < 0 && d != None {
		return fmt.Errorf("%s %s: want a positive duration, or %s for none", st.Flag, d, time.Duration(None))
	}
	return nil
}

// checkShare refuses a share out of 0..1 other than None.
func checkShare(st Setting, s Scenario) error {
	if v := st.field(&s).Float(); v > 1 || (v < 0 && v != None) {
		return fmt.Errorf("%s %g: want a share between 0 and 1", strings.ReplaceAll(st.Flag, "-", " "), v)
	}
	return nil
}
