package main

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/lockcheck/lockcheck/history"
	"github.com/lockcheck/lockcheck/history/historyjson"
	"github.com/lockcheck/lockcheck/scenarios"
	"github.com/lockcheck/lockcheck/scenarios/lockclient"
	"github.com/lockcheck/lockcheck/topology"
)

// opBound is the throughput workload: the native client with history
// recording, work, backoff and the resource's gap all but gone, so that the
// workers spend their time on lock calls. One key per client keeps
// contention, and so refused acquires, low. The scenario is resolved, as
// a Workload expects, for a standalone node of server.
func opBound(cfg config, server string, seed int64, d time.Duration, rec *history.Recorder) (scenarios.Workload, error) {
	s, err := scenarios.Scenario{
		ServerSettings:  scenarios.ServerSettings{Server: server, Topology: topology.Standalone},
		ClientSettings:  scenarios.ClientSettings{Client: "native"},
		TrafficSettings: scenarios.TrafficSettings{Clients: cfg.clients, Keys: cfg.clients, TTL: time.Second, Duration: d, Seed: seed, WorkMin: time.Microsecond, WorkMax: 2 * time.Microsecond, AbandonRate: scenarios.None, LateRate: scenarios.None, LateReplyRate: scenarios.None, ObserveEvery: scenarios.None, BackoffMin: 100 * time.Microsecond, BackoffMax: time.Millisecond, WriteGap: scenarios.None},
	}.Resolve()
	return scenarios.Workload{Scenario: s, Recorder: rec}, err
}

const opBoundNote = "native client, %d clients on %d keys, TTL 1 s, work 1-2 µs, no stalls, abandons, frozen calls, late holds or observations, backoff 0.1-1 ms, no resource gap"

// throughputSection runs the op-bound workload and valkey-benchmark's SET
// with the same number of clients on one standalone node, alternating.
func (b *bench) throughputSection(ctx context.Context) error {
	t, err := b.start(ctx, topology.Standalone)
	if err != nil {
		b.add(Row{Name: "workload throughput (lock operations with history recording)", Unit: "ops/s", section: secThroughput,
			Reference: "valkey-benchmark SET, same clients, same node (ceiling)", Note: "not measured: " + err.Error()})
		return err
	}
	defer b.stop(ctx, t)
	// the same node kind behind the network faults' proxy, no fault on
	tp, err := b.startWith(ctx, topology.Standalone, topology.WithClientProxy())
	if err != nil {
		return err
	}
	defer b.stop(ctx, tp)
	var s throughputSamples
	for i := range b.cfg.runs {
		if ctx.Err() != nil {
			break
		}
		b.throughputRound(ctx, i+1, t, tp, &s)
	}
	b.addThroughputRows(t, &s)
	return errors.Join(s.errs...)
}

// throughputSamples are the section's measurements, one value per run in
// each list, and what failed; a failed measurement leaves a gap, not the
// section.
type throughputSamples struct {
	// rates: the workload on t directly; linked: on tp's fault links;
	// proxied: through tp's proxy addresses; refs and hostRefs:
	// valkey-benchmark inside the node and through the host port.
	rates, linked, proxied, refs, hostRefs []float64
	allOps, lockOps                        int
	errs                                   []error
}

// throughputRound is run number run of each measurement, in turn, so that
// a machine's drift spreads over all of them.
func (b *bench) throughputRound(ctx context.Context, run int, t, tp *topology.Topology, s *throughputSamples) {
	node := t.Servers()[0]
	h, err := b.recordedRun(ctx, int64(run), lockclient.ConfigFor(t))
	if err != nil {
		s.errs = append(s.errs, fmt.Errorf("workload: %w", err))
	} else {
		n, rate := lockRate(h)
		s.rates = append(s.rates, rate)
		s.allOps, s.lockOps = s.allOps+len(h.Ops), s.lockOps+n
		b.log.Info("workload throughput", "run", run, "lock_ops", n, "ops_per_s", int(rate))
	}
	if h, err := b.recordedRun(ctx, int64(run), lockclient.ConfigFor(tp)); err != nil {
		s.errs = append(s.errs, fmt.Errorf("workload on fault links: %w", err))
	} else {
		_, rate := lockRate(h)
		s.linked = append(s.linked, rate)
		b.log.Info("workload throughput on fault links", "run", run, "ops_per_s", int(rate))
	}
	if h, err := b.recordedRun(ctx, int64(run), throughProxy(lockclient.ConfigFor(tp))); err != nil {
		s.errs = append(s.errs, fmt.Errorf("workload through the proxy: %w", err))
	} else {
		_, rate := lockRate(h)
		s.proxied = append(s.proxied, rate)
		b.log.Info("workload throughput through the proxy", "run", run, "ops_per_s", int(rate))
	}
	rps, err := b.valkeyBenchmark(ctx, node)
	if err != nil {
		s.errs = append(s.errs, err)
	} else {
		s.refs = append(s.refs, rps)
		b.log.Info("valkey-benchmark", "run", run, "set_per_s", int(rps))
	}
	rps, err = b.valkeyBenchmarkHost(ctx, node)
	if err != nil {
		s.errs = append(s.errs, err)
	} else {
		s.hostRefs = append(s.hostRefs, rps)
		b.log.Info("valkey-benchmark through the host port", "run", run, "set_per_s", int(rps))
	}
}

// addThroughputRows adds the section's four rows: the workload against
// valkey-benchmark in the node and on the clients' path, and the fault
// links and the proxy against the direct path.
func (b *bench) addThroughputRows(t *topology.Topology, s *throughputSamples) {
	rates, refs, hostRefs, linked, proxied := s.rates, s.refs, s.hostRefs, s.linked, s.proxied
	var notes []string
	if len(rates) > 0 {
		notes = append(notes, fmtValues(rates, "ops/s"))
	}
	if len(refs) > 0 {
		notes = append(notes, "valkey-benchmark "+fmtValues(refs, "SET/s"))
	}
	for _, e := range s.errs {
		notes = append(notes, e.Error())
	}
	notes = append(notes, fmt.Sprintf(opBoundNote, b.cfg.clients, b.cfg.clients),
		fmt.Sprintf("%s per run; lock operations = acquire + extend + release (%d of %d recorded operations; the rest are the resource's writes, in the harness)", b.cfg.tpDuration, s.lockOps, s.allOps),
		fmt.Sprintf("the harness's clients dial "+t.ClientPath()+", valkey-benchmark -t set -c %d -n %d -q runs inside the node's container", b.cfg.clients, b.cfg.benchN))
	b.add(Row{Name: "workload throughput (lock operations with history recording)", Unit: "ops/s", section: secThroughput,
		Reference: fmt.Sprintf("valkey-benchmark SET, %d clients, same node (ceiling)", b.cfg.clients),
		Value:     num(median(rates)), ReferenceValue: num(median(refs)), Runs: len(rates), Note: strings.Join(notes, "; ")}.withRatio())
	hostNotes := []string{fmtValues(rates, "ops/s")}
	if len(hostRefs) > 0 {
		hostNotes = append(hostNotes, "valkey-benchmark "+fmtValues(hostRefs, "SET/s"))
	}
	hostNotes = append(hostNotes, fmt.Sprintf("the same workload runs; valkey-benchmark -t set -c %d -n %d -q runs in a container on the host's network against the address the harness's clients dial ("+t.ClientPath()+")", b.cfg.clients, b.cfg.benchN))
	b.add(Row{Name: "workload throughput, against the same path (lock operations with history recording)", Unit: "ops/s", section: secThroughput,
		Reference: fmt.Sprintf("valkey-benchmark SET, %d clients, on the harness's clients' path (its ceiling)", b.cfg.clients),
		Value:     num(median(rates)), ReferenceValue: num(median(hostRefs)), Runs: len(rates), Note: strings.Join(hostNotes, "; ")}.withRatio())
	b.add(Row{Name: "workload throughput on the network faults' links, no fault on (lock operations with history recording)", Unit: "ops/s", section: secThroughput,
		Reference: "the same workload, clients dialing the node directly (" + t.ClientPath() + ")",
		Value:     num(median(linked)), ReferenceValue: num(median(rates)), Runs: len(linked),
		Note: fmtValues(linked, "ops/s") + "; a standalone topology with topology.Options.ProxyClients (what a run naming latency, blackhole-primary, reset-connections, slow-replication or partition-sentinels gets): in-process clients' connections wrapped in the node's fault link; run after the direct one in each round"}.withRatio())
	b.add(Row{Name: "workload throughput through the network faults' proxy (external adapters' path), no fault on", Unit: "ops/s", section: secThroughput,
		Reference: "the same workload, clients dialing the node directly (" + t.ClientPath() + ")",
		Value:     num(median(proxied)), ReferenceValue: num(median(rates)), Runs: len(proxied),
		Note: fmtValues(proxied, "ops/s") + "; the same native clients made to dial the proxy addresses an external adapter gets (addr_map), to price the hop external processes pay"}.withRatio())
}

// throughProxy makes cfg's in-process clients dial the proxy addresses an
// external adapter gets, not their own fault links.
func throughProxy(cfg lockclient.Config) lockclient.Config {
	m := cfg.AddrMap
	cfg.Option.DialCtxFn = func(ctx context.Context, addr string, d *net.Dialer, _ *tls.Config) (net.Conn, error) {
		if a, ok := m[addr]; ok {
			addr = a
		}
		return d.DialContext(ctx, "tcp", addr)
	}
	return cfg
}

// recordedRun runs the op-bound workload recording the way a run does:
// every operation streamed to ops.jsonl (a temporary folder here), only
// the latest kept in memory; the history is read back from the stream
// after the timed run.
func (b *bench) recordedRun(ctx context.Context, seed int64, lcfg lockclient.Config) (*history.History, error) {
	dir, err := os.MkdirTemp("", "lockcheck-throughput-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, history.StreamName)
	rec := history.NewRecorder()
	if err := rec.StreamTo(path, history.Meta{}); err != nil {
		return nil, err
	}
	w, err := opBound(b.cfg, b.build.Name, seed, b.cfg.tpDuration, rec)
	if err == nil {
		_, err = w.Run(ctx, lcfg)
	}
	if cerr := rec.CloseStream(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, err
	}
	return historyjson.LoadStream(path)
}

// lockRate counts the lock calls of h and their rate between the first
// call and the last return.
func lockRate(h *history.History) (int, float64) {
	var n int
	var first, last int64 = -1, 0
	for _, op := range h.Ops {
		if op.Kind == history.Write {
			continue
		}
		n++
		if first < 0 || op.Call < first {
			first = op.Call
		}
		last = max(last, op.Return)
	}
	if n == 0 || last <= first {
		return n, 0
	}
	return n, float64(n) / (float64(last-first) / 1e9)
}

// valkeyBenchmarkHost runs the image's benchmark tool in a container of
// its own on the host's network, against the address the harness's
// clients dial (the node's container address, or its mapped port when
// the host does not reach containers): the clients' own path.
func (b *bench) valkeyBenchmarkHost(ctx context.Context, n *topology.Node) (float64, error) {
	tool := string(n.Family()) + "-benchmark"
	host, port, err := net.SplitHostPort(n.ClientAddr())
	if err != nil {
		return 0, err
	}
	args := []string{"run", "--rm", "--network", "host",
		"--label", topology.LabelManaged + "=true", "--label", topology.LabelRun + "=" + b.runID,
		"--entrypoint", tool, b.image,
		"-h", host, "-p", port, "-t", "set", "-c", strconv.Itoa(b.cfg.clients), "-n", strconv.Itoa(b.cfg.benchN), "-q"}
	out, err := exec.CommandContext(ctx, "docker", args...).CombinedOutput()
	if err != nil {
		return 0, fmt.Errorf("%s through the host port: %v: %s", tool, err, strings.TrimSpace(string(out)))
	}
	m := benchmarkRate.FindAllStringSubmatch(string(out), -1)
	if len(m) == 0 {
		return 0, fmt.Errorf("%s through the host port: no SET rate in its output %q", tool, out)
	}
	return strconv.ParseFloat(m[len(m)-1][1], 64)
}

var benchmarkRate = regexp.MustCompile(`SET: ([0-9.]+) requests per second`)

// valkeyBenchmark runs the image's benchmark tool inside the node's
// container against the server there.
func (b *bench) valkeyBenchmark(ctx context.Context, n *topology.Node) (float64, error) {
	tool := string(n.Family()) + "-benchmark"
	out, err := n.Exec(ctx, tool, "-t", "set", "-c", strconv.Itoa(b.cfg.clients), "-n", strconv.Itoa(b.cfg.benchN), "-q")
	if err != nil {
		return 0, fmt.Errorf("%s: %w", tool, err)
	}
	m := benchmarkRate.FindAllStringSubmatch(out, -1)
	if len(m) == 0 {
		return 0, fmt.Errorf("%s: no SET rate in its output %q", tool, out)
	}
	return strconv.ParseFloat(m[len(m)-1][1], 64)
}
