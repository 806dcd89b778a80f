package fault

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/lockcheck/lockcheck/scenarios/internal/pace"
	"github.com/lockcheck/lockcheck/topology"
)

// clusterOnly is the kind the slot faults fit: only a cluster has slots.
var clusterOnly = []topology.Kind{topology.Cluster}

// slotMove is one move of the lock key's slot, as a fault plans it: what
// its window's detail names.
type slotMove struct {
	key      string
	slot     int
	from, to *topology.Node
	method   topology.MigrationMethod
}

func (mv slotMove) String() string {
	return fmt.Sprintf("slot %d (%s) from %s to %s by %s", mv.slot, mv.key, mv.from.Name, mv.to.Name, mv.method)
}

// planBestMove is planMove with the best method the two primaries share,
// atomic first: what the faults that move the lock key's slot start with.
// Errors name the fault.
func planBestMove(ctx context.Context, env Env, fault string) (slotMove, error) {
	mv, err := planMove(ctx, env.Topo, env.Key)
	if err == nil {
		mv.method, err = bestMethod(ctx, mv.from, mv.to, atomicFirst...)
	}
	if err != nil {
		return mv, fmt.Errorf("%s: %w", fault, err)
	}
	return mv, nil
}

// planMove finds the owner of key's slot and another primary to move it
// to: the first by name among the primaries that own slots, so that a
// replay picks the same one.
func planMove(ctx context.Context, t *topology.Topology, key string) (slotMove, error) {
	mv := slotMove{key: key, slot: topology.KeySlot(key)}
	var err error
	if mv.from, err = t.SlotOwner(ctx, mv.slot); err != nil {
		return mv, err
	}
	others, err := otherPrimaries(ctx, t, mv.from)
	if err != nil {
		return mv, err
	}
	if len(others) == 0 {
		return mv, fmt.Errorf("no primary but %s owns slots: nowhere to move slot %d", mv.from.Name, mv.slot)
	}
	mv.to = others[0]
	return mv, nil
}

// otherPrimaries are the primaries that own slots, but not, sorted by name.
func otherPrimaries(ctx context.Context, t *topology.Topology, not *topology.Node) ([]*topology.Node, error) {
	shards, err := t.Shards(ctx)
	if err != nil {
		return nil, err
	}
	var out []*topology.Node
	for _, sh := range shards {
		if sh.Primary != not {
			out = append(out, sh.Primary)
		}
	}
	slices.SortFunc(out, func(a, b *topology.Node) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// atomicFirst is the order in which a fault that takes the best method
// tries them: the atomic ones hand the slot over at once, the legacy one
// key by key.
var atomicFirst = []topology.MigrationMethod{topology.MigrateValkeyAtomic, topology.MigrateRedisAtomic, topology.MigrateLegacy}

// bestMethod is the first of methods both primaries have, as their servers
// say (MigrationSupport); an error when none, naming what each said.
func bestMethod(ctx context.Context, from, to *topology.Node, methods ...topology.MigrationMethod) (topology.MigrationMethod, error) {
	var why []error
	for _, m := range methods {
		err := from.MigrationSupport(ctx, m)
		if err == nil {
			err = to.MigrationSupport(ctx, m)
		}
		if err == nil {
			return m, nil
		}
		if !errors.Is(err, topology.ErrUnsupported) {
			return "", err
		}
		why = append(why, err)
	}
	return "", fmt.Errorf("no migration method of %v on both %s and %s: %w", methods, from.Name, to.Name, errors.Join(why...))
}

// moveBound is how long a fault waits for a migration of a slot to end: a
// slot holds a few keys, and a lease more lets a held key's holder go.
func moveBound(ttl time.Duration) time.Duration { return 30*time.Second + ttl }

// migrateAndWait moves mv's slot by mv.method and waits for its end
// within bound. It returns what happened, in the window's words, and
// whether the slot moved. A migration that did not end within its bound,
// or when ctx ended, is cancelled, so that the slot stays with one owner.
func migrateAndWait(ctx context.Context, env Env, mv slotMove, first, last int, bound time.Duration) (string, bool, error) {
	begin := time.Now()
	m, err := env.Topo.MigrateSlots(ctx, mv.method, mv.from, mv.to, first, last, topology.MigrateOptions{})
	if err != nil {
		return "failed to start: " + err.Error(), false, err
	}
	wctx, cancel := context.WithTimeout(ctx, bound)
	defer cancel()
	st, err := m.Wait(wctx)
	took := time.Since(begin).Round(time.Millisecond)
	if err == nil {
		switch st.State {
		case topology.MigrationSucceeded:
			if st.ByTarget {
				// the source never said so, the target did
				return fmt.Sprintf("moved in %s (%s)", took, st.Message), true, nil
			}
			return fmt.Sprintf("moved in %s", took), true, nil
		case topology.MigrationFailed:
			return "failed: " + st.String(), false, nil
		}
		return st.String(), false, nil
	}
	what := fmt.Sprintf("did not finish within %s (last status %s)", bound, st)
	if ctx.Err() != nil {
		what = fmt.Sprintf("stopped by the run's end after %s (last status %s)", took, st)
	}
	return what + "; " + cancelMove(ctx, m), false, nil
}

// cancelMove cancels m, also after ctx ended, and says how it went.
func cancelMove(ctx context.Context, m *topology.Migration) string {
	cctx, cancel := cleanup(ctx)
	defer cancel()
	if err := m.Cancel(cctx); err != nil {
		return "cancel failed: " + err.Error()
	}
	return "cancelled"
}

// recordMove writes what happened into window win and says whether the
// slot moved: not from the migration's reply alone, but once every
// running server names the new owner and the new owner serves the lock
// key itself (a GET on it alone, which a node that does not own the slot
// answers with MOVED), while the source, when it still runs, sends it
// away. The new owner is then the window's promoted node; a move that
// did not happen, also one the run's end cut short, is the window's
// unmet.
func recordMove(ctx context.Context, env Env, win int, mv slotMove, what string, moved bool) {
	env.Rec.FaultTarget(win, mv.from.Name, mv.String()+": "+what)
	if !moved {
		env.unmet(win, "%s: %s", mv, what)
		return
	}
	served, err := servedBy(ctx, env, mv)
	if err != nil {
		env.Rec.FaultTarget(win, mv.from.Name, fmt.Sprintf("%s: %s, but %v", mv, what, err))
		env.unmet(win, "%s: %s, but %v", mv, what, err)
		return
	}
	env.Rec.FaultTarget(win, mv.from.Name, fmt.Sprintf("%s: %s; %s", mv, what, served))
	env.Rec.FaultPromoted(win, mv.to.Name)
}

// servedBy checks that mv's target owns the slot as the cluster says and
// serves the lock key, and that its source no longer does; it says what
// each answered.
func servedBy(ctx context.Context, env Env, mv slotMove) (string, error) {
	if err := env.Topo.AwaitSlotOwner(ctx, mv.slot, mv.slot, mv.to, 10*time.Second); err != nil {
		return "", err
	}
	// A node that just joined answers CLUSTERDOWN until it has learned
	// that every slot is covered: how long, the window says.
	begin := time.Now()
	var got, refused string
	err := pace.Poll(ctx, 10*time.Second, 50*time.Millisecond, func() bool {
		g, err := mv.to.Do(ctx, "GET", env.Key)
		if err != nil {
			refused = err.Error()
			return false
		}
		got = g
		return true
	})
	if err != nil {
		return "", fmt.Errorf("the new owner does not serve %s within 10s: %s", env.Key, refused)
	}
	says := fmt.Sprintf("%s serves %s (GET: %s)", mv.to.Name, env.Key, got)
	if refused != "" {
		says += fmt.Sprintf(" after %s of %s", time.Since(begin).Round(time.Millisecond), firstWord(refused))
	}
	if !mv.from.Running(ctx) {
		return says, nil
	}
	if old, err := mv.from.Do(ctx, "GET", env.Key); err == nil || !strings.Contains(err.Error(), "MOVED") {
		return "", fmt.Errorf("%s still serves %s (GET: %s, %v)", mv.from.Name, env.Key, old, err)
	}
	return says + ", " + mv.from.Name + " answers MOVED", nil
}

// firstWord is an error's first word after the command it names
// ("GET on n6: CLUSTERDOWN The cluster is down": CLUSTERDOWN).
func firstWord(err string) string {
	if _, after, ok := strings.Cut(err, ": "); ok {
		err = after
	}
	if f := strings.Fields(err); len(f) > 0 {
		return f[0]
	}
	return err
}

// settleKey is a key in key's slot, which its primary takes writes for
// (in a cluster another slot's key would answer MOVED): the key's hash tag,
// or the key itself without one, as a tag of its own.
func settleKey(key string) string {
	tag := key
	if i := strings.IndexByte(key, '{'); i >= 0 {
		if j := strings.IndexByte(key[i+1:], '}'); j > 0 {
			tag = key[i+1 : i+1+j]
		}
	}
	return "lockcheck:settle:{" + tag + "}"
}
