package main

import (
	"flag"
	"fmt"
	"time"

	"github.com/lockcheck/lockcheck/scenarios"
)

// positive refuses a count or duration flag given as 0 or less. The
// Scenario reads a zero field as "take the default", so an explicit
// --ttl 0 would silently run with 15s: the user meant something else, and
// is told so before anything starts.
func positive(fs *flag.FlagSet, names ...string) error {
	for _, name := range names {
		f := fs.Lookup(name)
		if f == nil || !flagSet(fs, name) {
			continue
		}
		bad, what := false, "a number"
		switch v := f.Value.(flag.Getter).Get().(type) {
		case int:
			bad = v <= 0
		case int64:
			bad = v <= 0
		case time.Duration:
			bad, what = v <= 0, "a duration"
		case float64:
			bad = v <= 0
		}
		if !bad {
			continue
		}
		hint := "leave it out for the default"
		if f.DefValue != "0" && f.DefValue != "0s" {
			hint += ", " + f.DefValue
		}
		return fmt.Errorf("--%s %s: want %s above 0 (%s)", name, f.Value, what, hint)
	}
	return nil
}

// checkSize bounds a measurement's workers and keys as a run's are
// (scenarios.MaxClients, MaxKeys), before anything is spent on them.
func checkSize(clientsFlag string, clients, keys int) error {
	if clients < 1 || clients > scenarios.MaxClients {
		return fmt.Errorf("%s %d: want 1 to %d (each is a worker with its own connections to the servers, all on this machine)", clientsFlag, clients, scenarios.MaxClients)
	}
	if keys < 1 || keys > scenarios.MaxKeys {
		return fmt.Errorf("--keys %d: want 1 to %d (more keys than workers are never contended)", keys, scenarios.MaxKeys)
	}
	return nil
}
