package topology_test

import (
	"bufio"
	"context"
	"errors"
	"net"
	"syscall"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/lockcheck/lockcheck/suites"
	"github.com/lockcheck/lockcheck/topology"
)

// The network faults act on the clients' links (topology.Options.ProxyClients)
// on two paths: in-process clients' connections, wrapped by the topology's
// dialer, and the proxy per node that other processes (external adapters)
// dial. Each spec measures a fault's effect on a connection to the primary
// on each path, and its undoing, and that the primary's own links
// (replication, the harness's control connection) are untouched. The
// mechanism does not depend on the server's version: one build.
var _ = Describe("client links", Ordered, Label(suites.Links, suites.KindLabel(topology.Replicated)), func() {
	const build = "valkey-9.1"
	var primary, replica *topology.Node
	var dialers = map[string]func(ctx context.Context) *pingConn{}
	BeforeAll(func(ctx SpecContext) {
		t := env.Start(ctx, build, topology.Replicated, topology.Options{ProxyClients: true})
		primary, replica = t.Nodes[0], t.Nodes[1]
		Expect(primary.ClientAddr()).NotTo(Equal(primary.Addr()), "other processes dial the proxy, not the mapped port")
		Expect(primary.ClientAddr()).NotTo(Equal(primary.Internal()), "other processes dial the proxy, not the node")
		dialers["proxy"] = func(ctx context.Context) *pingConn { return dialPing(ctx, primary.ClientAddr()) }
		dialers["in-process"] = func(ctx context.Context) *pingConn {
			var d net.Dialer
			c, err := t.ClientOption().DialCtxFn(ctx, primary.Internal(), &d, nil)
			Expect(err).NotTo(HaveOccurred())
			return pingOn(c)
		}
	}, NodeTimeout(2*time.Minute))

	for _, path := range []string{"in-process", "proxy"} {
		Context("on the "+path+" path", func() {
			It("slow: a PING takes the added latency each way, then answers at once again", func(ctx SpecContext) {
				c := dialers[path](ctx)
				rtt, err := ping(c, 5*time.Second)
				Expect(err).NotTo(HaveOccurred())
				AddReportEntry("PING before", rtt.String())

				const delay = 250 * time.Millisecond
				Expect(primary.SlowLinks(delay, 0)).To(Succeed())
				DeferCleanup(primary.HealLinks)
				for range 3 {
					rtt, err = ping(c, 5*time.Second)
					Expect(err).NotTo(HaveOccurred())
					Expect(rtt).To(BeNumerically(">=", 2*delay), "a round trip through a link slowed by %s each way", delay)
				}
				AddReportEntry("PING slowed", rtt.String())
				Expect(primary.Do(ctx, "PING")).To(Equal("PONG"), "the control connection is not slowed")

				Expect(primary.HealLinks()).To(Succeed())
				Eventually(func() (time.Duration, error) { return ping(c, 5*time.Second) }).
					WithContext(ctx).Should(BeNumerically("<", delay), "the same connection, healed")
			}, SpecTimeout(time.Minute))

			It("blackhole: clients get no reply while the primary still replicates, then a new connection is served", func(ctx SpecContext) {
				c := dialers[path](ctx)
				Expect(primary.BlackholeLinks()).To(Succeed())
				DeferCleanup(primary.HealLinks)
				_, err := ping(c, time.Second)
				Expect(err).To(MatchError(ContainSubstring("timeout")), "a PING into the blackhole")

				_, err = primary.Do(ctx, "SET", "lockcheck:blackhole", "1")
				Expect(err).NotTo(HaveOccurred())
				Eventually(func(ctx context.Context) (string, error) { return replica.Do(ctx, "GET", "lockcheck:blackhole") }).
					WithContext(ctx).Should(Equal("1"), "the primary still replicates")
				_, err = primary.Do(ctx, "DEL", "lockcheck:blackhole")
				Expect(err).NotTo(HaveOccurred())

				Expect(primary.HealLinks()).To(Succeed())
				Eventually(func(ctx context.Context) error {
					_, err := ping(dialers[path](ctx), time.Second)
					return err
				}).WithContext(ctx).Should(Succeed(), "a new connection after healing")
			}, SpecTimeout(time.Minute))

			It("reset: connected clients get a TCP reset, new ones are served", func(ctx SpecContext) {
				c := dialers[path](ctx)
				_, err := ping(c, 5*time.Second)
				Expect(err).NotTo(HaveOccurred())
				n, err := primary.ResetLinks()
				Expect(err).NotTo(HaveOccurred())
				Expect(n).To(BeNumerically(">=", 1), "connections reset")
				_, err = ping(c, 5*time.Second)
				Expect(errors.Is(err, syscall.ECONNRESET)).To(BeTrue(), "the reset connection's next PING: %v", err)
				_, err = ping(dialers[path](ctx), 5*time.Second)
				Expect(err).NotTo(HaveOccurred(), "a new connection")
			}, SpecTimeout(time.Minute))
		})
	}
})

// pingConn is a raw connection speaking just enough RESP for PING.
type pingConn struct {
	net.Conn
	r *bufio.Reader
}

func dialPing(ctx context.Context, addr string) *pingConn {
	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp", addr)
	Expect(err).NotTo(HaveOccurred())
	return pingOn(c)
}

func pingOn(c net.Conn) *pingConn {
	DeferCleanup(c.Close)
	return &pingConn{Conn: c, r: bufio.NewReader(c)}
}

// ping sends PING and waits up to timeout for +PONG; it returns the
// round trip.
func ping(c *pingConn, timeout time.Duration) (time.Duration, error) {
	begin := time.Now()
	c.SetDeadline(begin.Add(timeout))
	if _, err := c.Write([]byte("PING\r\n")); err != nil {
		return 0, err
	}
	line, err := c.r.ReadString('\n')
	if err != nil {
		return 0, err
	}
	if line != "+PONG\r\n" {
		return 0, errors.New("PING answered " + line)
	}
	return time.Since(begin), nil
}
