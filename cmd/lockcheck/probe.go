package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/lockcheck/lockcheck/topology"
)

// probeResult is what probe prints with --json.
type probeResult struct {
	Server    string      `json:"server"`
	Version   string      `json:"version"`
	Image     string      `json:"image"`
	Topology  string      `json:"topology"`
	Healthy   bool        `json:"healthy"`
	StartupMS int64       `json:"startup_ms"`
	Nodes     []probeNode `json:"nodes"`
}

type probeNode struct {
	Name     string `json:"name"`
	Role     string `json:"role"`
	Addr     string `json:"addr"`
	Internal string `json:"internal"`
}

func runProbe(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlags("probe", stderr)
	var tf topoFlags
	tf.register(fs)
	asJSON := fs.Bool("json", false, "print one JSON object")
	if ok, code := parse(fs, args, stderr); !ok {
		return code
	}
	eng, t, code := tf.started(ctx, stderr)
	if t == nil {
		return code
	}
	defer teardown(ctx, eng, t, stderr)
	res := probeResult{Server: t.Build.Name, Version: t.Version, Image: t.Image, Topology: string(t.Kind), Healthy: true, StartupMS: t.Startup.Milliseconds()}
	for _, n := range t.Nodes {
		role, err := n.Role(ctx)
		if err != nil {
			res.Healthy = false
			role = topology.Role("unknown: " + err.Error())
		}
		res.Nodes = append(res.Nodes, probeNode{Name: n.Name, Role: string(role), Addr: n.Addr(), Internal: n.Internal()})
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		enc.Encode(res)
	} else {
		fmt.Fprintf(stdout, "%s %s: version %s, healthy %v, started in %d ms\n", res.Server, res.Topology, res.Version, res.Healthy, res.StartupMS)
		tw := tabwriter.NewWriter(stdout, 2, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "NODE\tROLE\tADDR\tINTERNAL")
		for _, n := range res.Nodes {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", n.Name, n.Role, n.Addr, n.Internal)
		}
		tw.Flush()
	}
	if !res.Healthy {
		return 1
	}
	return 0
}
