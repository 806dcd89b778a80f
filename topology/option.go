package topology

import (
	"context"
	"fmt"
	"io"
	"maps"
	"slices"
	"time"
)

// An Option sets one thing about the topology Start brings up; what no
// option sets keeps its default (Options' zero value). Options apply in
// the order given.
type Option func(*startConfig)

// startConfig is what Start's options add up to: the tunings, and where
// the images come from.
type startConfig struct {
	opts Options
	// image is the image every node runs; "" has Start obtain the build's.
	image   string
	sources Sources
	log     io.Writer
	// nodeBuilds and reinstall are builds whose images Start obtains, for
	// Options.NodeImages and Options.Images.
	nodeBuilds map[string]Build
	reinstall  []Build
}

func newStartConfig(opts []Option) *startConfig {
	c := &startConfig{log: io.Discard, nodeBuilds: map[string]Build{}}
	for _, o := range opts {
		o(c)
	}
	return c
}

// WithImage runs image, already present in the engine, instead of
// obtaining the build's image: for a caller that resolved it once for
// several topologies.
func WithImage(image string) Option { return func(c *startConfig) { c.image = image } }

// WithSources says where Start finds the images it obtains (local tags,
// a user's binaries, a registry).
func WithSources(src Sources) Option { return func(c *startConfig) { c.sources = src } }

// WithLog gets the progress of obtaining images (a pull, a build from
// Debian's packages takes minutes) and a line naming what Start starts.
func WithLog(w io.Writer) Option { return func(c *startConfig) { c.log = w } }

// WithOptions sets every tuning to o's at once, replacing what options
// before it set: for a caller that carries an Options value. Give it
// first when single options are to change some of it.
func WithOptions(o Options) Option {
	return func(c *startConfig) {
		o.ServerConfig = slices.Clone(o.ServerConfig)
		o.NodeImages, o.Images, o.NodeConfig = maps.Clone(o.NodeImages), maps.Clone(o.Images), maps.Clone(o.NodeConfig)
		c.opts = o
	}
}

// WithNodes is the number of independent primaries of a Redlock topology
// (default 3).
func WithNodes(n int) Option { return func(c *startConfig) { c.opts.Nodes = n } }

// WithAOF turns appendonly on on every server with the appendfsync policy
// f ("" for always), so that a killed node comes back with its data.
func WithAOF(f Fsync) Option {
	return func(c *startConfig) { c.opts.AOF, c.opts.Fsync = true, f }
}

// WithServerConfig appends configuration lines to every server's.
func WithServerConfig(lines ...string) Option {
	return func(c *startConfig) { c.opts.ServerConfig = append(slices.Clone(c.opts.ServerConfig), lines...) }
}

// WithNodeConfig appends configuration lines to one node's (by name: n1),
// e.g. replica-priority 0 so that Sentinel never promotes it.
func WithNodeConfig(node string, lines ...string) Option {
	return func(c *startConfig) {
		c.opts.NodeConfig = maps.Clone(c.opts.NodeConfig)
		if c.opts.NodeConfig == nil {
			c.opts.NodeConfig = map[string][]string{}
		}
		c.opts.NodeConfig[node] = append(slices.Clone(c.opts.NodeConfig[node]), lines...)
	}
}

// WithNodeImage runs one node (by name: n1) on another image of the same
// family: an older replica under newer clients, as in a rolling upgrade.
func WithNodeImage(node, image string) Option {
	return func(c *startConfig) {
		c.opts.NodeImages = maps.Clone(c.opts.NodeImages)
		if c.opts.NodeImages == nil {
			c.opts.NodeImages = map[string]string{}
		}
		c.opts.NodeImages[node] = image
	}
}

// WithNodeBuild is WithNodeImage with the image of build b, which Start
// obtains as it does the topology's own.
func WithNodeBuild(node string, b Build) Option {
	return func(c *startConfig) { c.nodeBuilds[node] = b }
}

// WithReinstallImage lets nodes be reinstalled on image as build name
// (Node.Reinstall, a rolling upgrade).
func WithReinstallImage(name, image string) Option {
	return func(c *startConfig) {
		c.opts.Images = maps.Clone(c.opts.Images)
		if c.opts.Images == nil {
			c.opts.Images = map[string]string{}
		}
		c.opts.Images[name] = image
	}
}

// WithReinstallBuild is WithReinstallImage with the image of build b,
// which Start obtains as it does the topology's own.
func WithReinstallBuild(b Build) Option {
	return func(c *startConfig) { c.reinstall = append(c.reinstall, b) }
}

// WithClientProxy routes clients through a proxy per node, where network
// faults act (SlowLinks, BlackholeLinks, ResetLinks). It costs
// throughput, so it is on only when asked for (and always on Redlock).
func WithClientProxy() Option { return func(c *startConfig) { c.opts.ProxyClients = true } }

// WithoutClockShim leaves the clock shim out; SetClockOffset then fails.
func WithoutClockShim() Option { return func(c *startConfig) { c.opts.NoClockShim = true } }

// WithDownAfter is Sentinel's down-after-milliseconds (default 1 s).
func WithDownAfter(d time.Duration) Option { return func(c *startConfig) { c.opts.DownAfter = d } }

// WithNodeTimeout is cluster-node-timeout (default 1 s).
func WithNodeTimeout(d time.Duration) Option { return func(c *startConfig) { c.opts.NodeTimeout = d } }

// WithHealthTimeout bounds the wait for a healthy topology (default 90 s).
func WithHealthTimeout(d time.Duration) Option {
	return func(c *startConfig) { c.opts.HealthTimeout = d }
}

// obtain makes present every image the topology runs or may be
// reinstalled on, the node builds' first, as they are named in the
// errors, and writes a line naming what starts.
func (c *startConfig) obtain(ctx context.Context, eng *Engine, b Build, kind Kind) error {
	for _, node := range slices.Sorted(maps.Keys(c.nodeBuilds)) {
		img, err := eng.Obtain(ctx, c.nodeBuilds[node], c.sources, c.log)
		if err != nil {
			return fmt.Errorf("node %s: %w", node, err)
		}
		WithNodeImage(node, img.Ref)(c)
	}
	for _, rb := range c.reinstall {
		img, err := eng.Obtain(ctx, rb, c.sources, c.log)
		if err != nil {
			return fmt.Errorf("upgrade to %s: %w", rb.Name, err)
		}
		WithReinstallImage(rb.Name, img.Ref)(c)
	}
	if c.image == "" {
		img, err := eng.Obtain(ctx, b, c.sources, c.log)
		if err != nil {
			return err
		}
		c.image = img.Ref
	}
	fmt.Fprintf(c.log, "starting %s %s on %s\n", b.Name, kind, c.image)
	return nil
}
