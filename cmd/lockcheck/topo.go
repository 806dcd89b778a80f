package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/lockcheck/lockcheck/topology"
)

// topoFlags choose a build and a topology.
type topoFlags struct {
	server, kind string
	aof          bool
	sourceFlags
}

func (f *topoFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.server, "server", "", "server build, e.g. valkey-9.1 (lockcheck images lists them)")
	fs.StringVar(&f.kind, "topology", "standalone", "standalone, replicated, sentinel or cluster")
	fs.BoolVar(&f.aof, "aof", false, "turn on appendonly with appendfsync always")
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
	eng, err := topology.Connect(ctx, nil)
	if err != nil {
		return nil, nil, fail(stderr, "%v", err)
	}
	img, err := eng.Obtain(ctx, b, src, stderr)
	if err != nil {
		eng.Close()
		return nil, nil, fail(stderr, "%v", err)
	}
	fmt.Fprintf(stderr, "starting %s %s on %s\n", b.Name, kind, img.Ref)
	t, err := topology.Start(ctx, eng, b, img.Ref, kind, topology.Options{AOF: f.aof})
	if err != nil {
		eng.Close()
		return nil, nil, fail(stderr, "%v", err)
	}
	return eng, t, 0
}

// teardown removes the topology with a deadline of its own, so that it
// also runs after Ctrl-C cancelled the command's context.
func teardown(ctx context.Context, eng *topology.Engine, t *topology.Topology, stderr io.Writer) {
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
	defer cancel()
	if err := t.Terminate(cctx); err != nil {
		fmt.Fprintf(stderr, "lockcheck: teardown: %v (make clean removes what is left)\n", err)
	}
	eng.Close()
}
