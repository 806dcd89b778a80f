package topology_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/lockcheck/lockcheck/topology"
)

// startClusterOf starts a cluster of build for one test and removes it
// when the test ends. Without a Docker engine or the build's image the
// test is skipped, or fails where LOCKTEST_REQUIRE is set (make test sets
// it): a skipped test there would count as a passing one.
func startClusterOf(t *testing.T, build string) *topology.Topology {
	t.Helper()
	if testing.Short() {
		t.Skip("starts a cluster of real servers")
	}
	unavailable := func(why string) {
		t.Helper()
		if os.Getenv("LOCKTEST_REQUIRE") != "" {
			t.Fatal(why)
		}
		t.Skip(why)
	}
	ctx := context.Background()
	eng, err := topology.Connect(ctx, nil)
	if err != nil {
		unavailable(err.Error())
	}
	stop := eng.RemoveOnInterrupt()
	t.Cleanup(func() { stop(); eng.Close() })
	b, err := topology.Lookup(build)
	if err != nil {
		t.Fatal(err)
	}
	img := eng.Resolve(ctx, b, topology.Sources{})
	if img.Status != topology.Present {
		unavailable(fmt.Sprintf("no %s image here (%s): lockcheck images --build", build, img.Status))
	}
	topo, err := topology.Start(ctx, eng, b, topology.Cluster, topology.WithImage(img.Ref))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := topo.Terminate(cctx); err != nil {
			t.Error(err)
		}
	})
	return topo
}

// keysIn are count keys whose slots lie from first to last.
func keysIn(first, last, count int) []string {
	var out []string
	for i := 0; len(out) < count; i++ {
		k := fmt.Sprintf("slotkey:%d", i)
		if s := topology.KeySlot(k); s >= first && s <= last {
			out = append(out, k)
		}
	}
	return out
}

// setAll writes each key with its own name as value on node n.
func setAll(t *testing.T, n *topology.Node, keys []string) {
	t.Helper()
	for _, k := range keys {
		if _, err := n.Do(context.Background(), "SET", k, k); err != nil {
			t.Fatal(err)
		}
	}
}

// wantAll reads each key on node n and wants its own name back.
func wantAll(t *testing.T, n *topology.Node, keys []string) {
	t.Helper()
	for _, k := range keys {
		v, err := n.Do(context.Background(), "GET", k)
		if err != nil || v != k {
			t.Fatalf("GET %s on %s: %q, %v; want %q", k, n.Name, v, err, k)
		}
	}
}

// twoPrimaries are the owner of slot and another primary.
func twoPrimaries(t *testing.T, topo *topology.Topology, slot int) (from, to *topology.Node) {
	t.Helper()
	ctx := context.Background()
	from, err := topo.SlotOwner(ctx, slot)
	if err != nil {
		t.Fatal(err)
	}
	shards, err := topo.Shards(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, sh := range shards {
		if sh.Primary != from {
			return from, sh.Primary
		}
	}
	t.Fatal("one primary only")
	return nil, nil
}

// askingGet sends ASKING and GET key on one connection to n, as a client
// that follows an ASK redirect does.
func askingGet(t *testing.T, n *topology.Node, key string) (string, error) {
	t.Helper()
	c, err := n.Client()
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	reps := c.DoMulti(ctx, c.B().Arbitrary("ASKING").Build(), c.B().Get().Key(key).Build())
	if _, err := topology.ReplyText(reps[0]); err != nil {
		return "", err
	}
	return topology.ReplyText(reps[1])
}

// hasPrefix says err carries an error reply that begins with prefix.
func hasPrefix(err error, prefix string) bool {
	var se topology.ServerError
	return errors.As(err, &se) && strings.HasPrefix(string(se), prefix)
}
