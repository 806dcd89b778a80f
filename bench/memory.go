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

// memorySection runs the workload, recorder and checker of one run in a
// child process for memory-duration and extrapolates its peak RSS per
// operation to a 10-minute run.
func (b *bench) memorySection(ctx context.Context) error {
	d := b.cfg.memDuration
	name10 := "peak memory of the harness, 10-minute run (extrapolated)"
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
		b.add(Row{Name: name10, Unit: "MiB", section: secMemory, Reference: "measured peak of the short run", Note: why})
		return err
	}
	mib := func(x float64) float64 { return x / (1 << 20) }
	perOp := float64(m.PeakRSS-m.BaselineRSS) / float64(m.Ops)
	ops10 := float64(m.Ops) * 600 / m.Seconds
	est := float64(m.BaselineRSS) + perOp*ops10
	b.log.Info("memory", "ops", m.Ops, "baseline_mib", m.BaselineRSS>>20, "peak_mib", m.PeakRSS>>20, "per_op_bytes", int(perOp), "est_10min_mib", int(mib(est)))
	workload := fmt.Sprintf(opBoundNote, b.cfg.clients, b.cfg.clients) + " on standalone (the throughput row's workload: the most operations per minute, so the worst case)"
	b.add(Row{Name: fmt.Sprintf("peak memory of the harness, %s run (measured)", d), Unit: "MiB", Value: num(mib(float64(m.PeakRSS))), Runs: 1, section: secMemory,
		Reference: "RSS of the same process before the workload (engine, topology, clients)", ReferenceValue: num(mib(float64(m.BaselineRSS))),
		Note: fmt.Sprintf("VmHWM of one process running workload + recorder + checker: %d operations (%d lock calls) in %.0f s, check %.2f s, verdict %s; Go heap from the OS at the end %d MiB; %s",
			m.Ops, m.LockOps, m.Seconds, m.CheckSecs, m.Verdict, m.HeapSys>>20, workload)}.withRatio())
	b.add(Row{Name: name10, Unit: "MiB", Value: num(mib(est)), Runs: 1, section: secMemory,
		Reference: fmt.Sprintf("measured peak of the %s run above", d), ReferenceValue: num(mib(float64(m.PeakRSS))),
		Note: fmt.Sprintf("EXTRAPOLATED, not measured: a 10-minute run does not fit in the 20-minute budget. From the %s run: baseline %.0f MiB + %.0f bytes per operation (peak - baseline over %d operations) x %.0f operations (the same rate for 600 s); assumes memory linear in operations (the recorder keeps every operation, the checker allocates about 250 bytes per operation)",
			d, mib(float64(m.BaselineRSS)), perOp, m.Ops, ops10) + b.defaultWorkloadEstimate(m, perOp)}.withRatio())
	return nil
}

// defaultWorkloadEstimate is the same extrapolation at the operation rate
// of lockcheck run's default workload, as the race runs measured it.
func (b *bench) defaultWorkloadEstimate(m memoryReport, perOp float64) string {
	if b.raceOps == 0 || b.raceTime <= 0 {
		return ""
	}
	rate := float64(b.raceOps) / b.raceTime.Seconds()
	est := float64(m.BaselineRSS) + perOp*rate*600
	return fmt.Sprintf("; at lockcheck run's default workload (TTL 15 s, 6 clients, 1 key: %.1f operations/s in the race rows' runs) the same extrapolation gives %.0f MiB", rate, est/(1<<20))
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
	h, err := w.Run(ctx, scenarios.ConfigFor(t))
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
