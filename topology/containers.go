package topology

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/netip"
	"strings"
	"sync"
	"time"

	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/api/types/network"
	tc "github.com/testcontainers/testcontainers-go"
	tcnet "github.com/testcontainers/testcontainers-go/network"
)

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
	if extra := t.opts.NodeConfig[name]; len(extra) > 0 {
		conf += strings.Join(extra, "\n") + "\n"
	}
	image := t.Image
	if img, ok := t.opts.NodeImages[name]; ok {
		image = img
	}
	files := []nodeFile{{path: confPath, mode: 0o644, data: []byte(conf)}}
	if err := t.runNode(ctx, n, image, files); err != nil {
		return n, err
	}
	return n, nil
}

// runNode starts n's container from image with files (its configuration
// or its data folder) and records where the host reaches it.
func (t *Topology) runNode(ctx context.Context, n *Node, image string, files []nodeFile) error {
	port := fmt.Sprintf("%d/tcp", n.Port)
	files = append(files, nodeFile{path: clockFile, mode: 0o644, data: []byte("0\n")})
	preload := ""
	if t.shim != nil {
		files = append(files, nodeFile{path: shimPath, mode: 0o755, data: t.shim})
		preload = shimPath
	}
	withFiles, err := t.withFiles(files)
	if err != nil {
		return fmt.Errorf("start node %s: %w", n.Name, err)
	}
	netName := t.net.Name
	c, err := tc.Run(ctx, image,
		tc.WithName("lockcheck-"+t.RunID+"-"+n.Name),
		tc.WithLabels(t.labels(n.Name)),
		tc.WithEntrypoint("/bin/sh", "-c"),
		tc.WithCmd(launchScript(t.Build, n.Sentinel, preload)),
		tc.WithExposedPorts(port),
		withFiles,
		tcnet.WithNetwork([]string{n.Name}, t.net),
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
		n.image = image
	}
	if err != nil {
		return fmt.Errorf("start node %s: %w", n.Name, err)
	}
	return t.mapPort(ctx, n)
}

// mapPort records where the host reaches a node, and routes the node's
// client proxy there; the mapped port changes when the node's container
// restarts.
func (t *Topology) mapPort(ctx context.Context, n *Node) error {
	host, err := n.c.Host(ctx)
	if err != nil {
		return fmt.Errorf("host of %s: %w", n.Name, err)
	}
	p, err := n.c.MappedPort(ctx, fmt.Sprintf("%d/tcp", n.Port))
	if err != nil {
		return fmt.Errorf("mapped port of %s: %w", n.Name, err)
	}
	mapped := fmt.Sprintf("%s:%d", host, p.Num())
	t.addrs.set(n.Internal(), mapped)
	proxied, err := t.links.route(ctx, n, mapped)
	if err != nil {
		return err
	}
	t.clients.set(n.Internal(), proxied)
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
// errGaveUp, wrapped by a condition's error, ends waitFor at once: what
// it waits for cannot come.
var errGaveUp = errors.New("gave up")

func (t *Topology) waitFor(ctx context.Context, what string, cond func(context.Context) error) error {
	return waitWithin(ctx, t.opts.HealthTimeout, what, cond)
}

// waitWithin is waitFor with its own bound.
func waitWithin(ctx context.Context, within time.Duration, what string, cond func(context.Context) error) error {
	ctx, cancel := context.WithTimeout(ctx, within)
	defer cancel()
	var last error
	for {
		cctx, ccancel := context.WithTimeout(ctx, 3*time.Second)
		last = cond(cctx)
		ccancel()
		if last == nil {
			return nil
		}
		if errors.Is(last, errGaveUp) {
			return fmt.Errorf("wait for %s: %w", what, last)
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
