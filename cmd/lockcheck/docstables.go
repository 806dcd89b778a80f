package main

import (
	"fmt"
	"strings"

	"github.com/lockcheck/lockcheck/scenarios"
	"github.com/lockcheck/lockcheck/scenarios/fault"
	"github.com/lockcheck/lockcheck/scenarios/lockclient"
	"github.com/lockcheck/lockcheck/topology"
)

// faultsPage is docs/reference/faults.md: every fault, the topologies it
// fits (its Available) and its description.
func faultsPage() (string, error) {
	var b strings.Builder
	b.WriteString("# Faults\n\n" + generatedNote + "\n")
	b.WriteString("Each fault is named with `--fault` (repeatable: the seed's schedule draws from them) or pinned with `--fault-at FAULT@OFFSET[@KEY]`. [faults.md](../faults.md) says how each is undone and when it strikes.\n\n")
	b.WriteString("| fault | topologies | what it does |\n|---|---|---|\n")
	for _, f := range fault.Faults() {
		d, ok := f.(fault.Describer)
		if !ok || d.Description() == "" {
			return "", fmt.Errorf("fault %s has no description: give it one beside its code", f.Name())
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s |\n", f.Name(), strings.Join(faultKinds(f), ", "), cell(d.Description()))
	}
	return b.String(), nil
}

// faultKinds are the topology kinds f fits.
func faultKinds(f fault.Fault) []string {
	var out []string
	for _, k := range append(topology.Kinds(), topology.Redlock) {
		if f.Available(k) {
			out = append(out, string(k))
		}
	}
	return out
}

// clientsPage is docs/reference/clients.md: every built-in client kind,
// what it needs from the server, whether it draws fences, and its
// description.
func clientsPage() (string, error) {
	var b strings.Builder
	b.WriteString("# Lock clients\n\n" + generatedNote + "\n")
	b.WriteString("Each is named with `--client KIND` (or `--clients` of a matrix). `external:CMD` runs any program that speaks the [adapter protocol](../adapters.md). A client that needs a command the build lacks is refused in one line before anything runs.\n\n")
	b.WriteString("| client | needs | fence | what it is |\n|---|---|---|---|\n")
	for _, kind := range lockclient.Kinds() {
		tr, _ := lockclient.TraitsOf(kind)
		if tr.Doc == "" {
			return "", fmt.Errorf("client %s has no description: give it one in its registry entry", kind)
		}
		var needs []string
		for _, c := range tr.Needs {
			needs = append(needs, fmt.Sprintf("%s (%s)", c, c.Since()))
		}
		fence := ""
		if tr.Fenced {
			fence = "yes"
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s |\n", kind, cell(strings.Join(needs, "; ")), fence, cell(tr.Doc))
	}
	b.WriteString("\n## How each tells its holder that the lock is gone\n\nThe API through which a holder learns of a loss, as the report card ([report-card.md](../report-card.md)) notes it.\n\n| client | how the holder learns of a loss |\n|---|---|\n")
	for _, kind := range lockclient.Kinds() {
		if tr, _ := lockclient.TraitsOf(kind); tr.Notice != "" {
			fmt.Fprintf(&b, "| `%s` | %s |\n", kind, cell(tr.Notice))
		}
	}
	fmt.Fprintf(&b, "| redis-py's Lock (adapter) | %s |\n", cell(scenarios.NoticeOf(scenarios.PythonLock)))
	return b.String(), nil
}
