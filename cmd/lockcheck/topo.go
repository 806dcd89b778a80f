package main

import (
	"context"
	"errors"
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

// register adds the flags of a command that starts any topology of a
// build it is told (probe, up).
func (f *topoFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.server, "server", "", "server build, e.g. valkey-9.1 (required; lockcheck images lists them)")
	fs.StringVar(&f.kind, "topology", string(topology.Standalone), "standalone, replicated, sentinel, cluster, or redlock (independent primaries)")
	fs.IntVar(&f.nodes, "nodes", 0, "independent primaries of a redlock topology (default 3)")
	f.registerServer(fs)
}

// registerStandalone adds the flags of a command that runs on one
// standalone server, of build server unless told (adapter-check): it has
// no --topology or --nodes, which it could only refuse.
func (f *topoFlags) registerStandalone(fs *flag.FlagSet, server string) {
	f.kind = string(topology.Standalone)
	fs.StringVar(&f.server, "server", server, "server build (lockcheck images lists them)")
	f.registerServer(fs)
}

// registerServer adds the flags every server takes, and where its image
// comes from.
func (f *topoFlags) registerServer(fs *flag.FlagSet) {
	fs.BoolVar(&f.aof, "aof", false, "turn on appendonly (appendfsync as --fsync says)")
	fs.StringVar(&f.fsync, "fsync", string(topology.FsyncAlways), "appendfsync policy with --aof: always, everysec or no")
	f.sourceFlags.register(fs)
}

// topoSetup is what the flags resolve to: the topology to start.
type topoSetup struct {
	build   topology.Build
	sources topology.Sources
	kind    topology.Kind
	options topology.Options
}

// setup checks the flags and resolves them into the topology to start; an
// error is one line for the user.
func (f *topoFlags) setup() (topoSetup, error) {
	if f.server == "" {
		return topoSetup{}, errors.New("--server is required: lockcheck images lists the builds")
	}
	src, err := f.sources()
	if err != nil {
		return topoSetup{}, err
	}
	b, err := f.build(f.server)
	if err != nil {
		return topoSetup{}, err
	}
	kind, err := topology.ParseKind(f.kind)
	if err != nil {
		return topoSetup{}, err
	}
	fsync, err := topology.ParseFsync(f.fsync)
	if err != nil {
		return topoSetup{}, fmt.Errorf("--fsync: %w", err)
	}
	if f.nodes != 0 && kind != topology.Redlock {
		return topoSetup{}, fmt.Errorf("--nodes %d: only --topology redlock takes a node count", f.nodes)
	}
	return topoSetup{build: b, sources: src, kind: kind, options: topology.Options{AOF: f.aof, Fsync: fsync, Nodes: f.nodes}}, nil
}

// started resolves the flags into a setup, stops there when the defaults
// test asks (settled), and starts the topology: t is nil when the command
// should return code.
func (f *topoFlags) started(ctx context.Context, stderr io.Writer) (eng *topology.Engine, t *topology.Topology, code int) {
	setup, err := f.setup()
	if err != nil {
		return nil, nil, fail(stderr, "%v", err)
	}
	if !settled(stderr, setup) {
		return nil, nil, 0
	}
	return setup.start(ctx, stderr)
}

// start obtains the image and starts the topology. It returns an exit
// code of 2 with one line on stderr when anything fails; nothing is left
// running then.
func (s topoSetup) start(ctx context.Context, stderr io.Writer) (*topology.Engine, *topology.Topology, int) {
	eng, err := topology.Connect(ctx, nil)
	if err != nil {
		return nil, nil, fail(stderr, "%v", err)
	}
	t, err := topology.Start(ctx, eng, s.build, s.kind, topology.WithOptions(s.options), topology.WithSources(s.sources), topology.WithLog(stderr))
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
