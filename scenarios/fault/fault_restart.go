package fault

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/lockcheck/lockcheck/history"
	"github.com/lockcheck/lockcheck/topology"
)

// RestartPrimary restarts the key's primary at once without its data, as
// a process manager restarts a crashed server that keeps no AOF: it
// comes back empty before anything notices it was gone, its replicas
// resynchronise from it and drop the lock too, and the next acquire is
// granted while the holder still believes. Failure detection is held off
// while it is down (Sentinel's down-after-milliseconds, the cluster's
// node-timeout, raised to a minute and put back after), so that the
// restart and not a failover is what the run meets. Like kill-primary it
// holds the holder of an acquire on the primary until a second worker
// took the lock (at most its lease), and the window's unmet says so when
// that moment did not come.
var RestartPrimary Fault = restartPrimary{faultBase{"restart-primary", []topology.Kind{topology.Standalone, topology.Replicated, topology.Sentinel, topology.Cluster}, "right after an acquire on the key's primary, restarts it at once without its data (failure detection held off meanwhile), its replicas resynchronise empty; holds that holder until a second one takes the lock (at most its lease)"}}

type restartPrimary struct{ faultBase }

// detectionOff is the failure detection's timeout while the primary is
// restarted: far longer than a restart.
const detectionOff = time.Minute

func (f restartPrimary) Inject(ctx context.Context, env Env) error {
	p, err := env.Topo.Primary(ctx, env.Key)
	if err != nil {
		return fmt.Errorf("%s: %w", f.name, err)
	}
	onPrimary := func(op history.Op) bool {
		q, err := env.Topo.Primary(ctx, op.Key)
		return err == nil && q == p
	}
	limit := max(2*env.TTL, 5*time.Second)
	r := newRace(env)
	defer r.done()
	caught := r == nil || r.catch(ctx, onPrimary, limit)
	win, end := env.openWindow(f.name, p, "restart without its data")
	defer end()
	if !caught {
		env.unmet(win, "no acquire landed on %s within %s", p.Name, limit)
		return nil
	}
	restore, err := holdDetection(ctx, env.Topo)
	defer restore()
	if err != nil {
		return fmt.Errorf("%s: %w", f.name, err)
	}
	if err := p.Restart(ctx, false); err != nil {
		return fmt.Errorf("%s: %w", f.name, err)
	}
	if r == nil {
		return nil
	}
	if waited, ok := r.second(ctx); !ok && ctx.Err() == nil {
		env.unmet(win, "no other worker took %s within the first holder's lease (%s after the restart)", r.first.Key, waited.Round(100*time.Millisecond))
	}
	return nil
}

// holdDetection raises the topology's failure detection timeouts to
// detectionOff and returns the function that puts them back (also after
// ctx ended).
func holdDetection(ctx context.Context, t *topology.Topology) (func(), error) {
	var undo []func(context.Context)
	restore := func() {
		cctx, cancel := cleanup(ctx)
		defer cancel()
		for _, u := range undo {
			u(cctx)
		}
	}
	off := fmt.Sprint(detectionOff.Milliseconds())
	for _, s := range t.Sentinels() {
		was, err := sentinelDownAfter(ctx, s)
		if err == nil {
			_, err = s.Do(ctx, "SENTINEL", "SET", topology.MasterSet, "down-after-milliseconds", off)
		}
		if err != nil {
			return restore, fmt.Errorf("hold off %s's failure detection: %w", s.Name, err)
		}
		undo = append(undo, func(ctx context.Context) {
			s.Do(ctx, "SENTINEL", "SET", topology.MasterSet, "down-after-milliseconds", was)
		})
	}
	if t.Kind != topology.Cluster {
		return restore, nil
	}
	for _, n := range t.Servers() {
		was, err := n.Do(ctx, "CONFIG", "GET", "cluster-node-timeout")
		if err == nil {
			_, err = n.Do(ctx, "CONFIG", "SET", "cluster-node-timeout", off)
		}
		if err != nil {
			return restore, fmt.Errorf("hold off %s's failure detection: %w", n.Name, err)
		}
		old := lastField(was)
		undo = append(undo, func(ctx context.Context) { n.Do(ctx, "CONFIG", "SET", "cluster-node-timeout", old) })
	}
	return restore, nil
}

// sentinelDownAfter is s's down-after-milliseconds for the primary.
func sentinelDownAfter(ctx context.Context, s *topology.Node) (string, error) {
	reply, err := s.Do(ctx, "SENTINEL", "MASTER", topology.MasterSet)
	if err != nil {
		return "", err
	}
	f := strings.Fields(strings.NewReplacer("[", " ", "]", " ", ",", " ").Replace(reply))
	for i := 0; i+1 < len(f); i++ {
		if f[i] == "down-after-milliseconds" {
			return f[i+1], nil
		}
	}
	return "", fmt.Errorf("SENTINEL MASTER %s has no down-after-milliseconds: %s", topology.MasterSet, reply)
}

// lastField is the last word of a reply as text ([name value]: value).
func lastField(reply string) string {
	f := strings.Fields(strings.Trim(reply, "[]"))
	if len(f) == 0 {
		return ""
	}
	return strings.Trim(f[len(f)-1], "[],")
}
