package scenarios

import (
	"fmt"
	"sort"
	"strings"
	"time"
)

// Args are the lockcheck run flags that make s: every field set in s (its
// zero fields are left to their defaults, None shares are written 0), so
// a table can show the command that reproduces its row. The CLI's test
// parses them back and compares (cmd/lockcheck, TestScenarioArgs).
func (s Scenario) Args() []string {
	var out []string
	add := func(flag string, v any) {
		if v == true {
			out = append(out, "--"+flag)
			return
		}
		out = append(out, fmt.Sprintf("--%s=%v", flag, v))
	}
	str := func(flag, v string) {
		if v != "" {
			add(flag, v)
		}
	}
	dur := func(flag string, d time.Duration) {
		if d != 0 {
			add(flag, d)
		}
	}
	num := func(flag string, n int) {
		if n != 0 {
			add(flag, n)
		}
	}
	share := func(flag string, v float64) {
		switch {
		case v == None:
			add(flag, 0)
		case v != 0:
			add(flag, v)
		}
	}
	str("server", s.Server)
	nodes := make([]string, 0, len(s.NodeBuilds))
	for n := range s.NodeBuilds {
		nodes = append(nodes, n)
	}
	sort.Strings(nodes)
	for _, n := range nodes {
		add("node-build", n+"="+s.NodeBuilds[n])
	}
	str("topology", string(s.Topology))
	num("nodes", s.Nodes)
	num("min-replicas-to-write", s.MinReplicas)
	dur("min-replicas-max-lag", s.MinReplicasMaxLag)
	if s.AOF {
		add("aof", true)
	}
	str("fsync", string(s.Fsync))
	str("client", s.Client)
	if s.Fenced {
		add("fenced", true)
	}
	for _, f := range s.Faults {
		add("fault", f)
	}
	for _, e := range s.Events {
		add("fault-at", e)
	}
	dur("duration", s.Duration)
	if s.UntilCovered {
		add("until-covered", true)
	}
	if s.Seed != 0 {
		add("seed", s.Seed)
	}
	num("clients", s.Clients)
	num("keys", s.Keys)
	dur("ttl", s.TTL)
	dur("work-min", s.WorkMin)
	dur("work-max", s.WorkMax)
	share("stall-rate", s.StallRate)
	share("pause-rate", s.PauseRate)
	share("late-rate", s.LateRate)
	share("abandon-rate", s.AbandonRate)
	switch {
	case s.ObserveEvery == None:
		add("observe-every", -1)
	case s.ObserveEvery != 0:
		add("observe-every", s.ObserveEvery)
	}
	dur("backoff-min", s.BackoffMin)
	dur("backoff-max", s.BackoffMax)
	dur("write-gap", s.WriteGap)
	dur("call-timeout", s.CallTimeout)
	if w := s.Wait; w.Enabled() {
		if w.AOF {
			add("wait-aof", fmt.Sprintf("%d/%d/%s", w.Local, w.Replicas, w.Timeout))
		} else {
			add("wait", fmt.Sprintf("%d/%s", w.Replicas, w.Timeout))
		}
		str("on-short", string(w.OnShort))
	}
	dur("fence-gap", s.FenceGap)
	if s.FenceGapRandom {
		add("fence-gap-random", true)
	}
	dur("tolerance", s.ClockTolerance)
	return out
}

// Command is lockcheck run with s's flags, as one line.
func (s Scenario) Command() string {
	return "lockcheck run " + strings.Join(s.Args(), " ")
}
