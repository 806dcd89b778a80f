package harness

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/lockcheck/lockcheck/topology"
)

// Start obtains b's image (building it from Debian's packages when it must,
// with progress on log) and starts kind on it. On error nothing is left
// running.
func Start(ctx context.Context, eng *topology.Engine, b topology.Build, src topology.Sources, kind topology.Kind, opts topology.Options, log io.Writer) (*topology.Topology, error) {
	img, err := eng.Obtain(ctx, b, src, log)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(log, "starting %s %s on %s\n", b.Name, kind, img.Ref)
	return topology.Start(ctx, eng, b, kind, topology.WithImage(img.Ref), topology.WithOptions(opts))
}

// Teardown removes t with a deadline of its own, so that it also runs after
// Ctrl-C cancelled ctx.
func Teardown(ctx context.Context, t *topology.Topology) error {
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
	defer cancel()
	if err := t.Terminate(cctx); err != nil {
		return fmt.Errorf("teardown of %s %s: %w (make clean removes what is left)", t.Build.Name, t.Kind, err)
	}
	return nil
}
