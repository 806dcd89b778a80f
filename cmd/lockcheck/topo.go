package main

import (
	"context"
	"flag"
	"fmt"
	"io"

	"github.com/lockcheck/lockcheck/harness"
	"github.com/lockcheck/lockcheck/topology"
)

// topoFlags choose a build and a topology.
type topoFlags struct {
	server, kind string
	aof          bool
	fsync        string
	nodes        int
	sourceFlags
}

func (f *topoFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.server, "server", "", "server build, e.g. valkey-9.1 (lockcheck images lists them)")
	fs.StringVar(&f.kind, "topology", "standalone", "standalone, replicated, sentinel, cluster, or redlock (independent primaries)")
	fs.BoolVar(&f.aof, "aof", false, "turn on appendonly (appendfsync as --fsync says)")
	fs.StringVar(&f.fsync, "fsync", "always", "appendfsync policy with --aof: always, everysec or no")
	fs.IntVar(&f.nodes, "nodes", 0, "independent primaries of a redlock topology (default 3)")
	f.sourceFlags.register(fs)
}

// start checks the flags, obtains the image and starts the topology. It
// returns an exit code of 2 with one line on stderr when anything fails;
// nothing is left running then.
func (f *topoFlags) start(ctx context.Context, stderr io.Writer) (*topology.Engine, *topology.Topology, int) {
	if f.server == "" {
		return nil, nil, fail(stderr, "--server is required: lockcheck images lists the builds")
	}
	src, err := f.sources()
	if err != nil {
		return nil, nil, fail(stderr, "%v", err)
	}
	b, err := f.build(f.server)
	if err != nil {
		return nil, nil, fail(stderr, "%v", err)
	}
	kind, err := topology.ParseKind(f.kind)
	if err != nil {
		return nil, nil, fail(stderr, "%v", err)
	}
	fsync, err := topology.ParseFsync(f.fsync)
	if err != nil {
		return nil, nil, fail(stderr, "--fsync: %v", err)
	}
	if f.nodes != 0 && kind != topology.Redlock {
		return nil, nil, fail(stderr, "--nodes %d: only --topology redlock takes a node count", f.nodes)
	}
	eng, err := topology.Connect(ctx, nil)
	if err != nil {
		return nil, nil, fail(stderr, "%v", err)
	}
	t, err := harness.Start(ctx, eng, b, src, kind, topology.Options{AOF: f.aof, Fsync: fsync, Nodes: f.nodes}, stderr)
	if err != nil {
		eng.Close()
		return nil, nil, fail(stderr, "%v", err)
	}
	return eng, t, 0
}

// teardown removes the topology (also after Ctrl-C) and closes the engine.
func teardown(ctx context.Context, eng *topology.Engine, t *topology.Topology, stderr io.Writer) {
	if err := harness.Teardown(ctx, t); err != nil {
		fmt.Fprintf(stderr, "lockcheck: %v\n", err)
	}
	eng.Close()
}
