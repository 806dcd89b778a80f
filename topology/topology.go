// Package topology starts real Valkey and Redis servers in containers, as
// standalone, replicated, Sentinel and cluster topologies, and gives the
// controls that break one node: kill, restart, pause, partition and clock
// offset. It is mechanism only: it never decides when to break something.
package topology

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/api/types/network"
	"github.com/moby/moby/client"
	tc "github.com/testcontainers/testcontainers-go"
	tcnet "github.com/testcontainers/testcontainers-go/network"
	"github.com/valkey-io/valkey-go"
)

// Topology is a set of nodes on one Docker network, healthy when Start
// returns.
type Topology struct {
	Kind  Kind
	Build Build
	// Image is the image every node runs.
	Image string
	// Version is the version the servers report.
	Version string
	// RunID labels every container and the network of this topology.
	RunID string
	// Nodes are the servers, then the sentinels.
	Nodes []*Node
	// Startup is the time from Start's call to healthy.
	Startup time.Duration

	opts    Options
	eng     *Engine
	net     *tc.DockerNetwork
	subnet  netip.Prefix
	gateway netip.Addr
	addrs   *addrMap
	shim    []byte

	termOnce sync.Once
	termErr  error
}

// Start brings up a topology of kind on image and waits until it is
// healthy. On failure it removes whatever it started and returns the error.
func Start(ctx context.Context, eng *Engine, b Build, image string, kind Kind, opts Options) (t *Topology, err error) {
	begin := time.Now()
	t = &Topology{Kind: kind, Build: b, Image: image, RunID: newRunID(), opts: opts.withDefaults(), eng: eng, addrs: newAddrMap()}
	eng.track(t.RunID)
	defer func() {
		if err != nil {
			// Clean up with a fresh deadline: ctx may be what failed.
			cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
			defer cancel()
			if terr := t.Terminate(cctx); terr != nil {
				err = errors.Join(err, terr)
			}
		}
	}()
	if !t.opts.NoClockShim {
		if t.shim, err = ClockShim(); err != nil {
			return t, err
		}
	}
	if err := t.createNetwork(ctx); err != nil {
		return t, err
	}
	switch kind {
	case Standalone:
		err = t.startStandalone(ctx)
	case Replicated:
		err = t.startReplicated(ctx)
	case Sentinel:
		err = t.startSentinel(ctx)
	case Cluster:
		err = t.startCluster(ctx)
	default:
		err = fmt.Errorf("unknown topology %q", kind)
	}
	if err != nil {
		return t, fmt.Errorf("start %s %s: %w", b.Name, kind, err)
	}
	if t.Version, err = t.Nodes[0].Version(ctx); err != nil {
		return t, fmt.Errorf("read version: %w", err)
	}
	if b.Version != "" && !b.VersionMatches(t.Version) {
		return t, fmt.Errorf("%s reports version %s, want %s", b.Name, t.Version, b.Version)
	}
	t.Startup = time.Since(begin)
	return t, nil
}

// Servers are the data nodes.
func (t *Topology) Servers() []*Node {
	var out []*Node
	for _, n := range t.Nodes {
		if !n.Sentinel {
			out = append(out, n)
		}
	}
	return out
}

// Sentinels are the sentinel nodes (none outside the sentinel topology).
func (t *Topology) Sentinels() []*Node {
	var out []*Node
	for _, n := range t.Nodes {
		if n.Sentinel {
			out = append(out, n)
		}
	}
	return out
}

// Node finds a node by name.
func (t *Topology) Node(name string) *Node {
	for _, n := range t.Nodes {
		if n.Name == name {
			return n
		}
	}
	return nil
}

// ClientOption is the valkey-go option for a client that follows this
// topology: one server, Sentinel's master set, or the cluster. Its dialer
// maps the addresses nodes announce to the host's mapped ports.
func (t *Topology) ClientOption() valkey.ClientOption {
	opt := valkey.ClientOption{DialCtxFn: t.addrs.dial, DisableCache: true}
	switch t.Kind {
	case Sentinel:
		for _, n := range t.Sentinels() {
			opt.InitAddress = append(opt.InitAddress, n.Internal())
		}
		opt.Sentinel = valkey.SentinelOption{MasterSet: MasterSet}
	case Cluster:
		for _, n := range t.Servers() {
			opt.InitAddress = append(opt.InitAddress, n.Internal())
		}
	default:
		opt.InitAddress = []string{t.Servers()[0].Internal()}
		opt.ForceSingleClient = true
	}
	return opt
}

// Addrs are the host addresses a client starts from, as the adapter
// protocol hands them out: sentinels, cluster nodes, or the servers with
// the primary first.
func (t *Topology) Addrs() []string {
	var out []string
	for _, n := range t.Nodes {
		if t.Kind == Sentinel && !n.Sentinel {
			continue
		}
		out = append(out, n.Addr())
	}
	return out
}

// Terminate removes every container and the network, also after a failed
// start. It is safe to call more than once.
func (t *Topology) Terminate(ctx context.Context) error {
	t.termOnce.Do(func() {
		for _, n := range t.Nodes {
			n.closeClient()
		}
		t.termErr = t.eng.RemoveRun(ctx, t.RunID)
	})
	return t.termErr
}

// RemoveRun removes the containers and networks labelled with a run id
// (every run when runID is ""), whatever state they are in.
func (e *Engine) RemoveRun(ctx context.Context, runID string) error {
	label := LabelManaged + "=true"
	if runID != "" {
		label = LabelRun + "=" + runID
	}
	f := client.Filters{}.Add("label", label)
	var errs []error
	res, err := e.cli.ContainerList(ctx, client.ContainerListOptions{All: true, Filters: f})
	if err != nil {
		return fmt.Errorf("list containers: %w", err)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	for _, c := range res.Items {
		wg.Go(func() {
			if _, err := e.cli.ContainerRemove(ctx, c.ID, client.ContainerRemoveOptions{Force: true, RemoveVolumes: true}); err != nil && !isNotFound(err) {
				mu.Lock()
				errs = append(errs, fmt.Errorf("remove container %s: %w", c.ID[:12], err))
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	nets, err := e.cli.NetworkList(ctx, client.NetworkListOptions{Filters: f})
	if err != nil {
		return errors.Join(append(errs, fmt.Errorf("list networks: %w", err))...)
	}
	for _, n := range nets.Items {
		if _, err := e.cli.NetworkRemove(ctx, n.ID, client.NetworkRemoveOptions{}); err != nil && !isNotFound(err) {
			errs = append(errs, fmt.Errorf("remove network %s: %w", n.Name, err))
		}
	}
	return errors.Join(errs...)
}

// createNetwork makes the topology's own bridge network. Its subnet is
// chosen here, not by the engine, because nodes need fixed addresses: a
// restarted node must come back where Sentinel and the cluster expect it.
func (t *Topology) createNetwork(ctx context.Context) error {
	var lastErr error
	seed := randomByte()
	for i := range 64 {
		third := (int(seed) + i*37) % 250
		subnet := netip.MustParsePrefix(fmt.Sprintf("10.213.%d.0/24", third))
		gw := netip.MustParseAddr(fmt.Sprintf("10.213.%d.1", third))
		nw, err := tcnet.New(ctx,
			tcnet.WithLabels(t.labels("")),
			tcnet.WithIPAM(&network.IPAM{Driver: "default", Config: []network.IPAMConfig{{Subnet: subnet, Gateway: gw}}}),
		)
		if err == nil {
			t.net, t.subnet, t.gateway = nw, subnet, gw
			return nil
		}
		lastErr = err
		if ctx.Err() != nil {
			break
		}
	}
	return fmt.Errorf("create network: %w", lastErr)
}

func (t *Topology) labels(node string) map[string]string {
	l := map[string]string{LabelManaged: "true", LabelRun: t.RunID}
	if node != "" {
		l[LabelNode] = node
	}
	return l
}

// nodeIP is the fixed address of the i-th node: .10 onwards.
func (t *Topology) nodeIP(i int) netip.Addr {
	a := t.subnet.Addr().As4()
	a[3] = byte(10 + i)
	return netip.AddrFrom4(a)
}

// addNode starts one container. conf is its configuration file.
func (t *Topology) addNode(ctx context.Context, name string, index int, sentinel bool, conf string) (*Node, error) {
	n := &Node{Name: name, IP: t.nodeIP(index), Port: ServerPort, Sentinel: sentinel, topo: t}
	if sentinel {
		n.Port = SentinelPort
	}
	port := fmt.Sprintf("%d/tcp", n.Port)
	if extra := t.opts.NodeConfig[name]; len(extra) > 0 {
		conf += strings.Join(extra, "\n") + "\n"
	}
	files := []tc.ContainerFile{
		{Reader: bytesReader(conf), ContainerFilePath: confPath, FileMode: 0o644},
		{Reader: bytesReader("0\n"), ContainerFilePath: clockFile, FileMode: 0o644},
	}
	env := map[string]string{}
	if t.shim != nil {
		files = append(files, tc.ContainerFile{Reader: bytesReader(string(t.shim)), ContainerFilePath: shimPath, FileMode: 0o755})
		env["LD_PRELOAD"] = shimPath
	}
	netName := t.net.Name
	image := t.Image
	if img, ok := t.opts.NodeImages[name]; ok {
		image = img
	}
	c, err := tc.Run(ctx, image,
		tc.WithName("lockcheck-"+t.RunID+"-"+name),
		tc.WithLabels(t.labels(name)),
		tc.WithEntrypoint("/bin/sh", "-c"),
		tc.WithCmd(launchScript(t.Build, sentinel)),
		tc.WithExposedPorts(port),
		tc.WithFiles(files...),
		tc.WithEnv(env),
		tcnet.WithNetwork([]string{name}, t.net),
		tc.WithEndpointSettingsModifier(func(es map[string]*network.EndpointSettings) {
			if s, ok := es[netName]; ok {
				s.IPAMConfig = &network.EndpointIPAMConfig{IPv4Address: n.IP}
			}
		}),
		tc.WithHostConfigModifier(func(hc *container.HostConfig) {
			// iptables inside the node cuts it off for partitions.
			hc.CapAdd = append(hc.CapAdd, "NET_ADMIN")
		}),
	)
	if c != nil {
		n.c = c
	}
	if err != nil {
		return n, fmt.Errorf("start node %s: %w", name, err)
	}
	if err := t.mapPort(ctx, n); err != nil {
		return n, err
	}
	return n, nil
}

// mapPort records where the host reaches a node; it changes when the node's
// container restarts.
func (t *Topology) mapPort(ctx context.Context, n *Node) error {
	host, err := n.c.Host(ctx)
	if err != nil {
		return fmt.Errorf("host of %s: %w", n.Name, err)
	}
	p, err := n.c.MappedPort(ctx, fmt.Sprintf("%d/tcp", n.Port))
	if err != nil {
		return fmt.Errorf("mapped port of %s: %w", n.Name, err)
	}
	t.addrs.set(n.Internal(), fmt.Sprintf("%s:%d", host, p.Num()))
	return nil
}

// addNodes starts nodes in parallel; the engine does the slow part.
func (t *Topology) addNodes(ctx context.Context, specs []nodeSpec) error {
	nodes := make([]*Node, len(specs))
	errs := make([]error, len(specs))
	var wg sync.WaitGroup
	for i, s := range specs {
		wg.Go(func() { nodes[i], errs[i] = t.addNode(ctx, s.name, s.index, s.sentinel, s.conf) })
	}
	wg.Wait()
	for _, n := range nodes {
		if n != nil && n.c != nil {
			t.Nodes = append(t.Nodes, n)
		}
	}
	return errors.Join(errs...)
}

type nodeSpec struct {
	name     string
	index    int
	sentinel bool
	conf     string
}

// waitFor polls cond until it holds or the health timeout passes; the
// error names what was awaited and the last thing that was wrong.
func (t *Topology) waitFor(ctx context.Context, what string, cond func(context.Context) error) error {
	ctx, cancel := context.WithTimeout(ctx, t.opts.HealthTimeout)
	defer cancel()
	var last error
	for {
		cctx, ccancel := context.WithTimeout(ctx, 3*time.Second)
		last = cond(cctx)
		ccancel()
		if last == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("wait for %s: %w (last: %v)", what, ctx.Err(), last)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func newRunID() string {
	b := make([]byte, 4)
	rand.Read(b)
	return hex.EncodeToString(b)
}

func randomByte() byte {
	b := make([]byte, 1)
	rand.Read(b)
	return b[0]
}

func isNotFound(err error) bool {
	type notFound interface{ NotFound() }
	var nf notFound
	if errors.As(err, &nf) {
		return true
	}
	msg := err.Error()
	return strings.Contains(msg, "No such container") || strings.Contains(msg, "not found") || strings.Contains(msg, "No such network")
}

func bytesReader(s string) io.Reader { return strings.NewReader(s) }

// SaveLogs writes each node's container output to dir/<node>.log.
func (t *Topology) SaveLogs(ctx context.Context, dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("save logs: %w", err)
	}
	var errs []error
	for _, n := range t.Nodes {
		rc, err := n.c.Logs(ctx)
		if err != nil {
			errs = append(errs, fmt.Errorf("logs of %s: %w", n.Name, err))
			continue
		}
		f, err := os.Create(filepath.Join(dir, n.Name+".log"))
		if err == nil {
			_, err = io.Copy(f, rc)
			f.Close()
		}
		rc.Close()
		if err != nil {
			errs = append(errs, fmt.Errorf("logs of %s: %w", n.Name, err))
		}
	}
	return errors.Join(errs...)
}
