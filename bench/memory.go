package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/lockcheck/lockcheck/checker"
	"github.com/lockcheck/lockcheck/history"
	"github.com/lockcheck/lockcheck/scenarios"
	"github.com/lockcheck/lockcheck/scenarios/lockclient"
	"github.com/lockcheck/lockcheck/topology"
)

// memoryReport is what the memory child measured about itself.
type memoryReport struct {
	BaselineRSS int64   `json:"baseline_rss"`
	PeakRSS     int64   `json:"peak_rss"`
	Ops         int     `json:"ops"`
	LockOps     int     `json:"lock_ops"`
	Seconds     float64 `json:"seconds"`
	CheckSecs   float64 `json:"check_seconds"`
	HeapSys     uint64  `json:"heap_sys"`
	Verdict     string  `json:"verdict"`
}

// memorySection runs the workload, recorder and checker of one run at
// full speed for memory-duration (10 minutes) in a child process and
// reports its measured peak RSS.
func (b *bench) memorySection(ctx context.Context) error {
	d := b.cfg.memDuration
	name := fmt.Sprintf("peak memory of the harness, %s full-speed run (measured)", d)
	cr, err := runChild(ctx, 0, "-child", "memory", "-server", b.build.Name, "-child-image", b.image,
		"-memory-duration", d.String(), "-clients", strconv.Itoa(b.cfg.clients))
	var m memoryReport
	if err == nil {
		err = json.Unmarshal(cr.Stdout, &m)
	}
	if err != nil || m.Ops == 0 {
		why := fmt.Sprintf("not measured: the %s run failed: %v", d, err)
		if err == nil {
			why = "not measured: the run recorded no operations"
		}
		b.add(Row{Name: name, Unit: "MiB", section: secMemory, Reference: "RSS before the workload", Note: why})
		return err
	}
	mib := func(x float64) float64 { return x / (1 << 20) }
	perOp := float64(m.PeakRSS-m.BaselineRSS) / float64(m.Ops)
	b.log.Info("memory", "ops", m.Ops, "baseline_mib", m.BaselineRSS>>20, "peak_mib", m.PeakRSS>>20, "per_op_bytes", int(perOp))
	workload := fmt.Sprintf(opBoundNote, b.cfg.clients, b.cfg.clients) + " on standalone (the throughput row's workload: the most operations per minute, so the worst case)"
	b.add(Row{Name: name, Unit: "MiB", Value: num(mib(float64(m.PeakRSS))), Runs: 1, section: secMemory,
		Reference: "RSS of the same process before the workload (engine, topology, clients)", ReferenceValue: num(mib(float64(m.BaselineRSS))),
		Note: fmt.Sprintf("VmHWM of one process running workload + recorder + checker: %d operations (%d lock calls) in %.0f s, check %.2f s, verdict %s; %.0f bytes per operation above the baseline (the recorder keeps every operation and the checker reads them all at once); Go heap from the OS at the end %d MiB; %s",
			m.Ops, m.LockOps, m.Seconds, m.CheckSecs, m.Verdict, perOp, m.HeapSys>>20, workload) + b.defaultWorkloadRate(perOp)}.withRatio())
	return nil
}

// defaultWorkloadRate says what the same bytes per operation come to at
// the operation rate of lockcheck run's default workload, as the race
// runs measured it.
func (b *bench) defaultWorkloadRate(perOp float64) string {
	if b.raceOps == 0 || b.raceTime <= 0 {
		return ""
	}
	rate := float64(b.raceOps) / b.raceTime.Seconds()
	return fmt.Sprintf("; lockcheck run's default workload (TTL 15 s, 6 clients, 1 key) makes %.1f operations/s in the race rows' runs, %.1f MiB per 10 minutes at that rate", rate, perOp*rate*600/(1<<20))
}

// memoryChild is the process whose memory is measured: engine, one
// standalone topology, the op-bound workload with its recorder, then the
// checker on the history, as lockcheck run does.
func memoryChild(ctx context.Context, cfg config, log *slog.Logger, out io.Writer) (err error) {
	bl, err := topology.Lookup(cfg.server)
	if err != nil {
		return err
	}
	eng, err := topology.Connect(ctx, log)
	if err != nil {
		return err
	}
	defer eng.Close()
	t, err := topology.Start(ctx, eng, bl, cfg.image, topology.Standalone, topology.Options{})
	if err != nil {
		return err
	}
	defer func() {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
		defer cancel()
		if terr := t.Terminate(cctx); terr != nil {
			log.Warn("teardown", "err", terr)
		}
	}()
	log.Info("topology up", "kind", t.Kind, "startup_ms", t.Startup.Milliseconds(), "run", t.RunID)
	runtime.GC()
	var m memoryReport
	if m.BaselineRSS, err = statusBytes("self", "VmRSS"); err != nil {
		return err
	}
	log.Info("memory run", "duration", cfg.memDuration, "baseline_mib", m.BaselineRSS>>20)
	rec := history.NewRecorder()
	w := opBound(cfg, 1, cfg.memDuration, rec)
	w.Progress = func(s scenarios.Stats) {
		if int(s.Elapsed.Seconds())%15 == 0 {
			log.Info("memory run", "elapsed", s.Elapsed.Round(time.Second), "ops", s.Ops)
		}
	}
	h, err := w.Run(ctx, lockclient.ConfigFor(t))
	if err != nil {
		return err
	}
	m.Ops = len(h.Ops)
	m.LockOps, _ = lockRate(h)
	m.Seconds = float64(h.Meta.DurationNs) / 1e9
	begin := time.Now()
	res, err := checker.Run(ctx, h, checker.Options{})
	if err != nil {
		return err
	}
	m.CheckSecs = time.Since(begin).Seconds()
	m.Verdict = strings.ToLower(string(res.Verdict))
	if m.PeakRSS, err = statusBytes("self", "VmHWM"); err != nil {
		return err
	}
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	m.HeapSys = ms.HeapSys
	runtime.KeepAlive(h)
	return json.NewEncoder(out).Encode(m)
}
