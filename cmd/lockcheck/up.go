package main

import (
	"context"
	"fmt"
	"io"
	"strings"
)

func runUp(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlags("up", stderr)
	var tf topoFlags
	tf.register(fs)
	if ok, code := parse(fs, args, stderr); !ok {
		return code
	}
	eng, t, code := tf.started(ctx, stderr)
	if t == nil {
		return code
	}
	defer teardown(ctx, eng, t, stderr)
	fmt.Fprintf(stdout, "%s %s (version %s) is up; Ctrl-C tears it down.\n", t.Build.Name, t.Kind, t.Version)
	cli := string(t.Build.Family) + "-cli"
	for _, n := range t.Nodes {
		host, port, _ := strings.Cut(n.Addr(), ":")
		role, _ := n.Role(ctx)
		extra := ""
		if t.Kind == "cluster" {
			extra = " -c"
		}
		fmt.Fprintf(stdout, "  %-3s %-8s %s -h %s -p %s%s   # %s inside the network\n", n.Name, role, cli, host, port, extra, n.Internal())
	}
	if t.Kind == "cluster" || t.Kind == "sentinel" {
		fmt.Fprintln(stdout, "  Redirects and Sentinel replies name the inside addresses; lockcheck's clients map them to the ports above.")
	}
	<-ctx.Done()
	fmt.Fprintln(stderr, "tearing down")
	return 0
}
