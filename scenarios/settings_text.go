package scenarios

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/lockcheck/lockcheck/scenarios/fault"
	"github.com/lockcheck/lockcheck/scenarios/lockclient"
)

// The settings that are not one value as text: how the table's rows for
// them read their flags (Setting.Parse) and write them back
// (Setting.Format), so that Args gives the flags that read back to the
// same Scenario.

func parseNodeBuilds(s *Scenario, text func(string) []string) error {
	for _, kv := range text("node-build") {
		node, b, ok := strings.Cut(kv, "=")
		if !ok || node == "" || b == "" {
			return fmt.Errorf("--node-build %q: want NODE=BUILD, e.g. n1=valkey-8.1", kv)
		}
		if s.NodeBuilds == nil {
			s.NodeBuilds = map[string]string{}
		}
		s.NodeBuilds[node] = b
	}
	return nil
}

func formatNodeBuilds(s Scenario) []string {
	nodes := make([]string, 0, len(s.NodeBuilds))
	for n := range s.NodeBuilds {
		nodes = append(nodes, n)
	}
	sort.Strings(nodes)
	var out []string
	for _, n := range nodes {
		out = append(out, "--node-build="+n+"="+s.NodeBuilds[n])
	}
	return out
}

func parseFaults(s *Scenario, text func(string) []string) error {
	s.Faults = text("fault")
	return nil
}

func formatFaults(s Scenario) []string {
	var out []string
	for _, f := range s.Faults {
		out = append(out, "--fault="+f)
	}
	return out
}

// parseEvents reads --fault-at; a step's fault joins the faults.
func parseEvents(s *Scenario, text func(string) []string) error {
	for _, t := range text("fault-at") {
		e, err := fault.ParseEvent(t, LockKey(0))
		if err != nil {
			return fmt.Errorf("--fault-at: %w", err)
		}
		s.Events = append(s.Events, e)
		if !slices.Contains(s.Faults, e.Fault) {
			s.Faults = append(s.Faults, e.Fault)
		}
	}
	return nil
}

func formatEvents(s Scenario) []string {
	var out []string
	for _, e := range s.Events {
		out = append(out, fmt.Sprintf("--fault-at=%v", e))
	}
	return out
}

// formatObserveEvery writes None as the flag's "none", -1.
func formatObserveEvery(s Scenario) []string {
	switch {
	case s.ObserveEvery == None:
		return []string{"--observe-every=-1"}
	case s.ObserveEvery != 0:
		return []string{fmt.Sprintf("--observe-every=%v", s.ObserveEvery)}
	}
	return nil
}

// parseWaitFlags reads --wait, --wait-aof and --on-short into Wait.
func parseWaitFlags(s *Scenario, text func(string) []string) error {
	last := func(flag string) string {
		v := text(flag)
		if len(v) == 0 {
			return ""
		}
		return v[len(v)-1]
	}
	w, err := parseWait(last("wait"), last("wait-aof"), last("on-short"))
	s.Wait = w
	return err
}

// formatWait writes Wait as --wait or --wait-aof, and --on-short.
func formatWait(s Scenario) []string {
	w := s.Wait
	if !w.Enabled() {
		return nil
	}
	out := []string{fmt.Sprintf("--wait=%d/%s", w.Replicas, w.Timeout)}
	if w.AOF {
		out = []string{fmt.Sprintf("--wait-aof=%d/%d/%s", w.Local, w.Replicas, w.Timeout)}
	}
	if w.OnShort != "" {
		out = append(out, "--on-short="+string(w.OnShort))
	}
	return out
}

// deriveOnShort gives WAIT that falls short its default policy.
func deriveOnShort(s *Scenario) {
	if s.Wait.Enabled() && s.Wait.OnShort == "" {
		s.Wait.OnShort = lockclient.WaitGoOn
	}
}

// parseWait reads --wait REPLICAS[/TIMEOUT] or --wait-aof
// LOCAL/REPLICAS[/TIMEOUT], with --on-short's policy.
func parseWait(wait, waitAOF, onShort string) (lockclient.WaitOptions, error) {
	w := lockclient.WaitOptions{OnShort: lockclient.WaitPolicy(onShort), Timeout: 100 * time.Millisecond}
	flagName, spec, want := "--wait", wait, 1
	switch {
	case wait != "" && waitAOF != "":
		return w, fmt.Errorf("--wait and --wait-aof: choose one")
	case waitAOF != "":
		flagName, spec, want, w.AOF = "--wait-aof", waitAOF, 2, true
	case wait == "":
		return lockclient.WaitOptions{}, nil
	}
	parts := strings.Split(spec, "/")
	if len(parts) != want && len(parts) != want+1 {
		return w, fmt.Errorf("%s %q: want %s", flagName, spec, map[int]string{1: "REPLICAS[/TIMEOUT], e.g. 1/100ms", 2: "LOCAL/REPLICAS[/TIMEOUT], e.g. 1/1/100ms"}[want])
	}
	var nums []int
	for _, p := range parts[:want] {
		n, err := strconv.Atoi(p)
		if err != nil || n < 0 {
			return w, fmt.Errorf("%s %q: %q is not a count", flagName, spec, p)
		}
		nums = append(nums, n)
	}
	if len(parts) > want {
		d, err := time.ParseDuration(parts[want])
		if err != nil || d <= 0 {
			return w, fmt.Errorf("%s %q: %q is not a timeout such as 100ms", flagName, spec, parts[want])
		}
		w.Timeout = d
	}
	if w.AOF {
		w.Local, w.Replicas = nums[0], nums[1]
	} else {
		w.Replicas = nums[0]
	}
	return w, nil
}
