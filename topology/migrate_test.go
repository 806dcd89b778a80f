package topology_test

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/lockcheck/lockcheck/topology"
)

// TestValkeyMigrations moves slots on one valkey-9.1 cluster by each
// method it has: legacy phase by phase (a key readable through ASKING on
// the target between the phases), atomic with keys, and an atomic one
// cancelled while its target cannot be reached.
func TestValkeyMigrations(t *testing.T) {
	topo := startClusterOf(t, "valkey-9.1")
	t.Run("legacy", func(t *testing.T) { legacyPhases(t, topo) })
	t.Run("atomic", func(t *testing.T) { atomicWithKeys(t, topo, topology.MigrateValkeyAtomic, 100) })
	t.Run("cancel", func(t *testing.T) { valkeyAtomicCancel(t, topo) })
	t.Run("legacy-cancel", func(t *testing.T) { legacyCancel(t, topo) })
}

// legacyCancel cancels a legacy migration slowed by a pause after each
// key: the keys moved come back, and the source still owns the slots.
func legacyCancel(t *testing.T, topo *topology.Topology) {
	ctx := context.Background()
	first, last := 9000, 9004
	from, to := twoPrimaries(t, topo, first)
	keys := keysIn(first, last, 20)
	setAll(t, from, keys)
	m, err := topo.MigrateSlots(ctx, topology.MigrateLegacy, from, to, first, last, topology.MigrateOptions{KeyPause: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	for st, _ := m.Status(ctx); st.Keys < 2; st, _ = m.Status(ctx) {
		time.Sleep(20 * time.Millisecond)
	}
	if err := m.Cancel(ctx); err != nil {
		t.Fatal(err)
	}
	st, err := m.Wait(ctx)
	if err != nil || st.State != topology.MigrationCancelled {
		t.Fatalf("after Cancel: %s, %v", st, err)
	}
	t.Logf("cancelled after %d keys moved", st.Keys)
	if err := topo.AwaitSlotOwner(ctx, first, last, from, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	wantAll(t, from, keys)
	for slot := first; slot <= last; slot++ {
		if n, err := to.Do(ctx, "CLUSTER", "COUNTKEYSINSLOT", strconv.Itoa(slot)); err != nil || n != "0" {
			t.Fatalf("keys of slot %d left on the target: %s, %v", slot, n, err)
		}
	}
}

// TestRedisAtomicMigration moves a range of slots with keys on a
// redis-8.6 cluster by CLUSTER MIGRATION IMPORT.
func TestRedisAtomicMigration(t *testing.T) {
	topo := startClusterOf(t, "redis-8.6")
	atomicWithKeys(t, topo, topology.MigrateRedisAtomic, 200)
}

// TestAtomicMigrationUnsupported: valkey-8.1 has the legacy method only,
// and says so through COMMAND INFO.
func TestAtomicMigrationUnsupported(t *testing.T) {
	topo := startClusterOf(t, "valkey-8.1")
	ctx := context.Background()
	n0 := topo.Node("n0")
	if err := n0.MigrationSupport(ctx, topology.MigrateLegacy); err != nil {
		t.Fatalf("legacy: %v", err)
	}
	for _, m := range []topology.MigrationMethod{topology.MigrateValkeyAtomic, topology.MigrateRedisAtomic} {
		err := n0.MigrationSupport(ctx, m)
		if !errors.Is(err, topology.ErrUnsupported) {
			t.Fatalf("%s: %v, want ErrUnsupported", m, err)
		}
		t.Logf("%s: %v", m, err)
	}
	_, err := topo.MigrateSlots(ctx, topology.MigrateValkeyAtomic, n0, topo.Node("n1"), 0, 10, topology.MigrateOptions{})
	if !errors.Is(err, topology.ErrUnsupported) || !strings.Contains(err.Error(), "cluster|migrateslots") {
		t.Fatalf("MigrateSlots: %v, want ErrUnsupported naming cluster|migrateslots", err)
	}
}

func legacyPhases(t *testing.T, topo *topology.Topology) {
	ctx := context.Background()
	key := "legacy:{lock}"
	slot := topology.KeySlot(key)
	from, to := twoPrimaries(t, topo, slot)
	setAll(t, from, []string{key})
	l, err := topo.BeginLegacyMigration(ctx, from, to, slot, slot, topology.MigrateOptions{KeyPause: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	wantAll(t, from, []string{key}) // still on the source: served there
	if err := l.MoveKeys(ctx); err != nil {
		t.Fatal(err)
	}
	if st := l.Status(); st.Keys != 1 || st.State != topology.MigrationRunning {
		t.Fatalf("after MoveKeys: %+v", st)
	}
	if _, err := from.Do(ctx, "GET", key); !hasPrefix(err, "ASK ") {
		t.Fatalf("GET on the source after the move: %v, want ASK", err)
	}
	if _, err := to.Do(ctx, "GET", key); !hasPrefix(err, "MOVED ") {
		t.Fatalf("GET on the target without ASKING: %v, want MOVED", err)
	}
	if v, err := askingGet(t, to, key); err != nil || v != key {
		t.Fatalf("ASKING GET on the target: %q, %v", v, err)
	}
	if err := l.Finish(ctx); err != nil {
		t.Fatal(err)
	}
	if err := topo.AwaitSlotOwner(ctx, slot, slot, to, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	wantAll(t, to, []string{key})
	if st := l.Status(); st.State != topology.MigrationSucceeded {
		t.Fatalf("after Finish: %+v", st)
	}
}

// atomicWithKeys moves slots with keys in them by an atomic method and
// wants the keys on the target, which owns the slots everywhere.
func atomicWithKeys(t *testing.T, topo *topology.Topology, method topology.MigrationMethod, width int) {
	ctx := context.Background()
	from, to := twoPrimaries(t, topo, 0)
	first, last := 0, width-1
	keys := keysIn(first, last, 300)
	setAll(t, from, keys)
	begin := time.Now()
	m, err := topo.MigrateSlots(ctx, method, from, to, first, last, topology.MigrateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	wctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	st, err := m.Wait(wctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s: %s in %s; fields %v", m, st, time.Since(begin).Round(time.Millisecond), st.Fields)
	if st.State != topology.MigrationSucceeded {
		t.Fatalf("ended %s", st)
	}
	if err := topo.AwaitSlotOwner(ctx, first, last, to, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	wantAll(t, to, keys)
	if err := m.Cancel(ctx); err == nil {
		t.Fatal("a finished migration was cancelled")
	}
}

// valkeyAtomicCancel cancels an atomic migration whose source cannot
// reach its target, so that it cannot end first.
func valkeyAtomicCancel(t *testing.T, topo *topology.Topology) {
	ctx := context.Background()
	first, last := 6000, 6009
	from, to := twoPrimaries(t, topo, first)
	keys := keysIn(first, last, 20)
	setAll(t, from, keys)
	if err := from.Cut(ctx, to); err != nil {
		t.Fatal(err)
	}
	defer from.Heal(ctx)
	m, err := topo.MigrateSlots(ctx, topology.MigrateValkeyAtomic, from, to, first, last, topology.MigrateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	st, err := m.Status(ctx)
	if err != nil || st.State != topology.MigrationRunning {
		t.Fatalf("status while cut off: %+v, %v", st, err)
	}
	if err := m.Cancel(ctx); err != nil {
		t.Fatal(err)
	}
	wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if st, err = m.Wait(wctx); err != nil || st.State != topology.MigrationCancelled {
		t.Fatalf("after Cancel: %s, %v", st, err)
	}
	t.Logf("cancelled: %s", st)
	if err := from.Heal(ctx); err != nil {
		t.Fatal(err)
	}
	if err := topo.AwaitSlotOwner(ctx, first, last, from, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	wantAll(t, from, keys)
	if err := topo.AwaitHealthy(ctx, 30*time.Second); err != nil {
		t.Fatal(err)
	}
}
