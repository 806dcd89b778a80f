package topology_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lockcheck/lockcheck/topology"
)

// TestAddAndRemoveShard scales a valkey-9.1 cluster out by a primary and
// its replica, moves a slot with a key to the new primary and back, and
// scales it in again; the removed nodes' logs are still saved.
func TestAddAndRemoveShard(t *testing.T) {
	topo := startClusterOf(t, "valkey-9.1")
	ctx := context.Background()
	sh, err := topo.AddShard(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if sh.Primary.Name != "n6" || len(sh.Replicas) != 1 || sh.Replicas[0].Name != "n7" {
		t.Fatalf("new shard %s %v, want n6 and its replica n7", sh.Primary.Name, sh.Replicas)
	}
	if err := topo.AwaitHealthy(ctx, 30*time.Second); err != nil {
		t.Fatal(err)
	}
	key := "scale:{lock}"
	slot := topology.KeySlot(key)
	owner, err := topo.SlotOwner(ctx, slot)
	if err != nil {
		t.Fatal(err)
	}
	setAll(t, owner, []string{key})
	move(t, topo, owner, sh.Primary, slot)
	wantAll(t, sh.Primary, []string{key})
	if err := topo.RemoveShard(ctx, sh); err == nil || !strings.Contains(err.Error(), "owns 1 slots") {
		t.Fatalf("RemoveShard of a primary with a slot: %v, want a refusal", err)
	}
	move(t, topo, sh.Primary, owner, slot)
	for _, n := range []*topology.Node{sh.Primary, sh.Replicas[0]} {
		role, err := n.Role(ctx)
		t.Logf("%s once emptied: %s %v", n.Name, role, err)
	}
	begin := time.Now()
	if err := topo.RemoveShard(ctx, sh); err != nil {
		t.Fatal(err)
	}
	t.Logf("removed in %s", time.Since(begin).Round(time.Millisecond))
	if len(topo.Nodes) != 6 || topo.Node("n6") != nil || topo.Node("n7") != nil {
		t.Fatalf("nodes after RemoveShard: %d", len(topo.Nodes))
	}
	if err := topo.AwaitHealthy(ctx, 30*time.Second); err != nil {
		t.Fatal(err)
	}
	wantAll(t, owner, []string{key})
	dir := t.TempDir()
	if err := topo.SaveLogs(ctx, dir); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"n0", "n6", "n7"} {
		if b, err := os.ReadFile(filepath.Join(dir, name+".log")); err != nil || len(b) == 0 {
			t.Fatalf("log of %s: %d bytes, %v", name, len(b), err)
		}
	}
}

// move migrates one slot by the legacy method through a Migration.
func move(t *testing.T, topo *topology.Topology, from, to *topology.Node, slot int) {
	t.Helper()
	ctx := context.Background()
	m, err := topo.MigrateSlots(ctx, topology.MigrateLegacy, from, to, slot, slot, topology.MigrateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if st, err := m.Wait(wctx); err != nil || st.State != topology.MigrationSucceeded {
		t.Fatalf("%s: %s, %v", m, st, err)
	}
	if err := topo.AwaitSlotOwner(ctx, slot, slot, to, 10*time.Second); err != nil {
		t.Fatal(err)
	}
}
