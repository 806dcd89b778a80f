package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/lockcheck/lockcheck/harness"
	"github.com/lockcheck/lockcheck/history"
	"github.com/lockcheck/lockcheck/history/historyjson"
	"github.com/lockcheck/lockcheck/topology"
)

// memoryReport is what the memory child measured about itself.
type memoryReport struct {
	BaselineRSS int64 `json:"baseline_rss"`
	PeakRSS     int64 `json:"peak_rss"`
	// WorkloadRSS is the highest RSS sampled while the workload ran;
	// PeakRSS includes the check after it.
	WorkloadRSS int64   `json:"workload_rss"`
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
	b.log.Info("memory", "ops", m.Ops, "baseline_mib", m.BaselineRSS>>20, "workload_mib", m.WorkloadRSS>>20, "peak_mib", m.PeakRSS>>20)
	workload := fmt.Sprintf(opBoundNote, b.cfg.clients, b.cfg.clients) + " on standalone (the throughput row's workload: the most operations per minute, so the worst case)"
	b.add(Row{Name: name, Unit: "MiB", Value: num(mib(float64(m.PeakRSS))), Runs: 1, section: secMemory,
		Reference: "RSS of the same process before the workload (engine, topology, clients)", ReferenceValue: num(mib(float64(m.BaselineRSS))),
		Note: fmt.Sprintf("VmHWM of one process running the scenario through harness.ExecuteOn as lockcheck run does (workload, recorder streaming to ops.jsonl, history.json from the stream, checker.RunFile, reports): %d operations (%d lock calls) in %.0f s; highest RSS sampled while the workload ran %.0f MiB; history.json, check and reports after it %.1f s, verdict %s; Go heap from the OS at the end %d MiB; %s",
			m.Ops, m.LockOps, m.Seconds, mib(float64(m.WorkloadRSS)), m.CheckSecs, m.Verdict, m.HeapSys>>20, workload)}.withRatio())
	return nil
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
	t, err := topology.Start(ctx, eng, bl, topology.Standalone, topology.WithImage(cfg.image))
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
	dir, err := os.MkdirTemp("", "lockcheck-bench-memory-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	runtime.GC()
	var m memoryReport
	if m.BaselineRSS, err = statusBytes("self", "VmRSS"); err != nil {
		return err
	}
	log.Info("memory run", "duration", cfg.memDuration, "baseline_mib", m.BaselineRSS>>20)
	w, err := opBound(cfg, bl.Name, 1, cfg.memDuration, nil)
	if err != nil {
		return err
	}
	s := w.Scenario
	// RSS sampled while the workload runs, apart from the check's peak
	// after it (VmHWM covers both)
	sampled := make(chan int64)
	sctx, stopSampling := context.WithCancel(ctx)
	go func() {
		peak := int64(0)
		end := time.Now().Add(cfg.memDuration)
		for time.Now().Before(end) && sctx.Err() == nil {
			if v, err := statusBytes("self", "VmRSS"); err == nil {
				peak = max(peak, v)
			}
			time.Sleep(100 * time.Millisecond)
		}
		sampled <- peak
	}()
	begin := time.Now()
	o, err := harness.ExecuteOn(ctx, t, s, harness.Options{Out: dir, Progress: progressLog{log}})
	stopSampling()
	m.WorkloadRSS = <-sampled
	if err != nil {
		return err
	}
	m.Ops = o.Check.Ops
	m.Seconds = float64(o.History.Meta.DurationNs) / 1e9
	m.CheckSecs = time.Since(begin).Seconds() - m.Seconds // history.json, check, reports
	m.Verdict = strings.ToLower(string(o.Check.Verdict))
	if m.PeakRSS, err = statusBytes("self", "VmHWM"); err != nil {
		return err
	}
	if m.LockOps, err = lockOps(filepath.Join(dir, "history.json")); err != nil {
		return err
	}
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	m.HeapSys = ms.HeapSys
	return json.NewEncoder(out).Encode(m)
}

// lockOps counts a history file's lock operations, reading it an
// operation at a time.
func lockOps(path string) (int, error) {
	n := 0
	_, err := historyjson.Scan(path, func(_ int, op *history.Op) error {
		if op.Kind != history.Write {
			n++
		}
		return nil
	})
	return n, err
}

// progressLog logs the run's live line every 15 s.
type progressLog struct{ log *slog.Logger }

func (p progressLog) Write(b []byte) (int, error) {
	line := strings.TrimSpace(strings.TrimPrefix(string(b), "\r"))
	if f := strings.Fields(line); len(f) > 0 {
		if sec, err := strconv.ParseFloat(strings.TrimSuffix(f[0], "s"), 64); err == nil && int(sec)%15 == 0 {
			p.log.Info("memory run", "progress", line)
		}
	}
	return len(b), nil
}
