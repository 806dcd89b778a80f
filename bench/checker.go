package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/anishathalye/porcupine"

	"github.com/lockcheck/lockcheck/bench/baseline"
	"github.com/lockcheck/lockcheck/checker"
	"github.com/lockcheck/lockcheck/history/synth"
)

// checkerSection times checker.Run on generated legal histories of each
// size, next to porcupine alone with the plain lock model on the same
// histories. Porcupine runs in a child process, so that its memory, which
// grows with the square of the operations per key, can be capped and
// measured without touching this process.
func (b *bench) checkerSection(ctx context.Context) error {
	var errs []error
	for _, size := range b.cfg.sizes {
		if ctx.Err() != nil {
			break
		}
		if err := b.checkerSize(ctx, size); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

func (b *bench) checkerSize(ctx context.Context, size int) error {
	keys := b.cfg.checkerKeys
	name := fmt.Sprintf("checker speed, %s-operation history (%d keys)", count(size), keys)
	row := Row{Name: name, Unit: "ops/s", section: secChecker,
		Reference: "porcupine v1.3.1 alone, plain lock model partitioned by key, same history"}
	genStart := time.Now()
	h := synth.Generate(1, size, keys, 5*keys)
	b.log.Info("generated history", "ops", len(h.Ops), "keys", keys, "took", time.Since(genStart).Round(time.Millisecond))
	var rates []float64
	var notes []string
	var err error
	for i := range b.cfg.runs {
		runtime.GC()
		begin := time.Now()
		res, rerr := checker.Run(ctx, h, checker.Options{})
		d := time.Since(begin)
		if rerr != nil {
			err = rerr
			break
		}
		if res.Verdict != checker.Safe {
			notes = append(notes, "checker says "+res.Summary+" on a generated legal history")
		}
		rates = append(rates, float64(len(h.Ops))/d.Seconds())
		b.log.Info("checker", "ops", len(h.Ops), "run", i+1, "ms", d.Milliseconds(), "ops_per_s", int(float64(len(h.Ops))/d.Seconds()), "segments", res.Segments)
	}
	ops := len(h.Ops)
	h = nil
	runtime.GC()
	row.Value, row.Runs = num(median(rates)), len(rates)
	if len(rates) > 0 {
		notes = append(notes, "checker "+fmtValues(rates, "ops/s"))
	}
	if err != nil {
		notes = append(notes, "checker failed: "+err.Error())
	}

	// Porcupine alone: once at 1M operations (it hits its caps), else runs.
	runs := b.cfg.runs
	if size >= 1_000_000 {
		runs = 1
	}
	var prates []float64
	var pnotes []string
	var peak int64
	for i := range runs {
		if ctx.Err() != nil {
			break
		}
		p, perr := b.porcupineAlone(ctx, size, keys)
		peak = max(peak, p.peak)
		if perr != nil {
			pnotes = append(pnotes, "porcupine alone failed: "+perr.Error())
			break
		}
		b.log.Info("porcupine alone", "ops", ops, "run", i+1, "result", p.Result, "check_s", p.Seconds, "process_s", p.elapsed.Seconds(), "peak_mib", p.peak>>20)
		if p.Result != "ok" {
			pnotes = append(pnotes, p.why)
			break
		}
		prates = append(prates, float64(ops)/p.Seconds)
	}
	row.ReferenceValue = num(median(prates))
	if len(prates) > 0 {
		notes = append(notes, fmt.Sprintf("porcupine alone %s (%d runs)", fmtValues(prates, "ops/s"), len(prates)))
	}
	notes = append(notes, pnotes...)
	if peak > 0 {
		notes = append(notes, fmt.Sprintf("porcupine's process peaked at %d MiB RSS", peak>>20))
	}
	notes = append(notes, "synth.Generate(seed 1, 5 clients per key); checker.Run with every check, default options, GOMAXPROCS "+strconv.Itoa(runtime.GOMAXPROCS(0))+"; ratio > 1: the checker is faster")
	row.Note = strings.Join(notes, "; ")
	b.add(row.withRatio())
	return err
}

// porcupineResult is what the porcupine child reports, or what the parent
// saw when it had to stop it.
type porcupineResult struct {
	Result  string  `json:"result"`
	Seconds float64 `json:"seconds"`
	Ops     int     `json:"ops"`
	// PeakRSS is the child's own VmHWM, bytes.
	PeakRSS int64 `json:"peak_rss"`
	peak    int64
	elapsed time.Duration
	why     string
}

func (b *bench) porcupineAlone(ctx context.Context, size, keys int) (porcupineResult, error) {
	capBytes := int64(b.cfg.porcMemMB) << 20
	cr, err := runChild(ctx, capBytes, "-child", "porcupine", "-child-ops", strconv.Itoa(size),
		"-checker-keys", strconv.Itoa(keys), "-porcupine-timeout", b.cfg.porcTimeout.String())
	p := porcupineResult{peak: cr.PeakRSS, elapsed: cr.Elapsed}
	if cr.Capped {
		p.Result = "capped"
		p.why = fmt.Sprintf("porcupine alone not measured: stopped at the %d MiB memory cap %.1f s after its process started (its memory grows with the square of the operations per key; DESIGN.md measured 115 s and 16.5 GiB for 1M operations over 10 keys; -porcupine-mem-mb raises the cap)",
			b.cfg.porcMemMB, cr.Elapsed.Seconds())
		return p, nil
	}
	if err != nil {
		return p, err
	}
	if err := json.Unmarshal(cr.Stdout, &p); err != nil {
		return p, fmt.Errorf("porcupine child's answer %q: %w", cr.Stdout, err)
	}
	p.peak = max(p.peak, p.PeakRSS)
	switch p.Result {
	case "unknown":
		p.why = fmt.Sprintf("porcupine alone not measured: Unknown at its %s timeout (peak %d MiB)", b.cfg.porcTimeout, p.peak>>20)
	case "illegal":
		p.why = "porcupine alone calls the generated history illegal"
	}
	return p, nil
}

// porcupineChild generates the history and checks it with porcupine alone,
// timing the check only, and prints a porcupineResult.
func porcupineChild(ctx context.Context, cfg config, out io.Writer) error {
	h := synth.Generate(1, cfg.ops, cfg.checkerKeys, 5*cfg.checkerKeys)
	ops := baseline.Ops(h)
	runtime.GC()
	done := make(chan porcupine.CheckResult, 1)
	begin := time.Now()
	go func() { done <- porcupine.CheckOperationsTimeout(baseline.Model(), ops, cfg.porcTimeout) }()
	var res porcupine.CheckResult
	select {
	case res = <-done:
	case <-ctx.Done():
		return ctx.Err()
	}
	p := porcupineResult{Seconds: time.Since(begin).Seconds(), Ops: len(h.Ops)}
	p.PeakRSS, _ = statusBytes("self", "VmHWM")
	switch res {
	case porcupine.Ok:
		p.Result = "ok"
	case porcupine.Illegal:
		p.Result = "illegal"
	default:
		p.Result = "unknown"
	}
	return json.NewEncoder(out).Encode(p)
}

// count writes 10000 as 10k and 1000000 as 1M.
func count(n int) string {
	switch {
	case n >= 1_000_000 && n%1_000_000 == 0:
		return fmt.Sprintf("%dM", n/1_000_000)
	case n >= 1_000 && n%1_000 == 0:
		return fmt.Sprintf("%dk", n/1_000)
	}
	return strconv.Itoa(n)
}
