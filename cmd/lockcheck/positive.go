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
		// A flag left at its default is not the user's 0: only a value
		// other than the default (0 where the default is 15s, or
		// anything negative) is judged.
		if f == nil {
			continue
		}
		if g, ok := f.Value.(interface{ Given() bool }); ok && !g.Given() || !ok && f.Value.String() == f.DefValue {
			continue
		}
		bad, what := false, "a number"
		var got any
		if g, ok := f.Value.(flag.Getter); ok {
			got = g.Get()
		} else if o, ok := f.Value.(*optional[int]); ok {
			got = o.value
		} else if o, ok := f.Value.(*optional[time.Duration]); ok {
			got = o.value
		}
		switch v := got.(type) {
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
