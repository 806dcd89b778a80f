package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"strings"
	"sync"
	"time"

	"github.com/lockcheck/lockcheck/checker"
	"github.com/lockcheck/lockcheck/history"
	"github.com/lockcheck/lockcheck/scenarios"
	"github.com/lockcheck/lockcheck/scenarios/fault"
	"github.com/lockcheck/lockcheck/topology"
)

// raceOutcome is one seeded kill-primary run.
type raceOutcome struct {
	seed int64
	// found: a double holder; after is its start minus the first
	// kill-primary window's start.
	found bool
	after time.Duration
	// kill is when the first SIGKILL came, after the window's start (0:
	// not seen).
	kill time.Duration
	ran  time.Duration
	err  error
}

// raceSection runs the unfenced native client under kill-primary with
// lockcheck run's defaults, seeds 1..n per topology, each on a fresh
// topology for up to race-duration, and stops a run early once a double
// holder is certain.
func (b *bench) raceSection(ctx context.Context) error {
	var errs []error
	for _, k := range failoverKinds {
		var outs []raceOutcome
		for seed := int64(1); seed <= int64(b.cfg.seeds); seed++ {
			if ctx.Err() != nil {
				break
			}
			o := b.raceOnce(ctx, k, seed)
			if o.err != nil {
				errs = append(errs, o.err)
			}
			b.log.Info("race run", "kind", k, "seed", seed, "found", o.found, "after_ms", o.after.Milliseconds(), "ran", o.ran.Round(time.Second), "err", o.err)
			outs = append(outs, o)
		}
		b.raceRows(k, outs)
	}
	return errors.Join(errs...)
}

func (b *bench) raceOnce(ctx context.Context, k topology.Kind, seed int64) raceOutcome {
	o := raceOutcome{seed: seed}
	t, err := b.start(ctx, k)
	if err != nil {
		o.err = err
		return o
	}
	defer b.stop(ctx, t)
	s, err := raceScenario(t, seed, b.cfg.raceDuration)
	if err != nil {
		o.err = err
		return o
	}
	rec := history.NewRecorder()
	kills := newKillClock(b.log.Handler(), rec)
	chaos := scenarios.Chaos{
		Workload: scenarios.Workload{Scenario: s, Recorder: rec},
		Log:      slog.New(kills.WithAttrs([]slog.Attr{slog.Any("kind", k), slog.Int64("seed", seed)})),
	}
	rctx, stopRun := context.WithCancel(ctx)
	defer stopRun()
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		watchDoubleHolder(rctx, rec, stopRun)
	}()
	res, err := chaos.Run(rctx, t)
	stopRun()
	<-watched
	o.ran = time.Duration(rec.Now())
	if ctx.Err() != nil {
		o.err = fmt.Errorf("%s seed %d: interrupted", k, seed)
		return o
	}
	if err != nil {
		o.err = fmt.Errorf("%s seed %d: %w", k, seed, err)
		return o
	}
	for _, n := range res.Notes {
		b.log.Warn("fault note", "kind", k, "seed", seed, "note", n)
	}
	o.found, o.after, o.err = firstDoubleHolder(ctx, res.History)
	if at := kills.first(); at > 0 {
		o.kill = time.Duration(at - firstKillWindow(res.History))
	}
	if o.err != nil {
		o.err = fmt.Errorf("%s seed %d: %w", k, seed, o.err)
	}
	return o
}

// raceScenario is lockcheck run's default scenario with the native client
// under kill-primary on t, for d: nothing else is changed; resolved, as a
// Workload expects.
func raceScenario(t *topology.Topology, seed int64, d time.Duration) (scenarios.Scenario, error) {
	return scenarios.Scenario{
		ServerSettings:  scenarios.ServerSettings{Server: t.Build.Name, Topology: t.Kind},
		ClientSettings:  scenarios.ClientSettings{Client: "native"},
		FaultSettings:   scenarios.FaultSettings{Faults: []string{fault.KillPrimary.Name()}},
		TrafficSettings: scenarios.TrafficSettings{Duration: d, Seed: seed},
	}.Resolve()
}

// watchDoubleHolder checks the history so far every 2 s and ends the run
// once a double holder started more than 3 s before the snapshot: a lock
// call lasts at most the client's 1 s timeout, so by then every release
// that could explain it away has been recorded.
func watchDoubleHolder(ctx context.Context, rec *history.Recorder, stop func()) {
	for sleepCtx(ctx, 2*time.Second) == nil {
		h := rec.History(history.Meta{})
		res, err := checker.Run(ctx, h, checker.Options{Skip: []string{checker.Linearizability}, MaxFindings: math.MaxInt32})
		if err != nil {
			continue
		}
		c, _ := res.Check(checker.DoubleHolder)
		for _, f := range c.Findings {
			if f.Start < h.Meta.DurationNs-int64(3*time.Second) {
				stop()
				return
			}
		}
	}
}

// firstDoubleHolder checks the finished history and returns the first
// double holder's start after the first kill-primary window's start.
func firstDoubleHolder(ctx context.Context, h *history.History) (bool, time.Duration, error) {
	kill := firstKillWindow(h)
	res, err := checker.Run(ctx, h, checker.Options{Skip: []string{checker.Linearizability}, MaxFindings: math.MaxInt32})
	if err != nil {
		return false, 0, fmt.Errorf("check: %w", err)
	}
	c, _ := res.Check(checker.DoubleHolder)
	first := int64(-1)
	for _, f := range c.Findings {
		if f.Kind == checker.KindDoubleHolder && (first < 0 || f.Start < first) {
			first = f.Start
		}
	}
	switch {
	case first < 0:
		return false, 0, nil
	case kill < 0:
		return true, 0, errors.New("a double holder but no kill-primary window in the history")
	}
	return true, time.Duration(first - kill), nil
}

// firstKillWindow is the start of the first kill-primary window, -1 when
// there is none.
func firstKillWindow(h *history.History) int64 {
	kill := int64(-1)
	for _, f := range h.Faults {
		if f.Name == fault.KillPrimary.Name() && (kill < 0 || f.Start < kill) {
			kill = f.Start
		}
	}
	return kill
}

// killClock passes log records on and notes, on the run's clock, when the
// kill-primary fault logs its SIGKILL: the fault's window opens earlier,
// when it shuts the workload's gate (fault.Gate), and the kill waits for
// the key to be free everywhere, the cut and a fresh acquire. The message
// is the one scenarios/fault/fault_primary.go logs.
type killClock struct {
	slog.Handler
	seen *killSeen
}

type killSeen struct {
	rec *history.Recorder
	mu  sync.Mutex
	at  int64
}

func newKillClock(h slog.Handler, rec *history.Recorder) *killClock {
	return &killClock{Handler: h, seen: &killSeen{rec: rec}}
}

func (k *killClock) Handle(ctx context.Context, r slog.Record) error {
	if r.Message == "killed primary" {
		k.seen.mu.Lock()
		if k.seen.at == 0 {
			k.seen.at = k.seen.rec.Now()
		}
		k.seen.mu.Unlock()
	}
	return k.Handler.Handle(ctx, r)
}

func (k *killClock) WithAttrs(as []slog.Attr) slog.Handler {
	return &killClock{Handler: k.Handler.WithAttrs(as), seen: k.seen}
}

func (k *killClock) WithGroup(name string) slog.Handler {
	return &killClock{Handler: k.Handler.WithGroup(name), seen: k.seen}
}

// first is when the first kill was logged, 0 for never.
func (k *killClock) first() int64 {
	k.seen.mu.Lock()
	defer k.seen.mu.Unlock()
	return k.seen.at
}

func (b *bench) raceRows(k topology.Kind, outs []raceOutcome) {
	var xs, kills, fromKill []float64
	found := 0
	var errs []string
	for _, o := range outs {
		if o.err != nil {
			errs = append(errs, o.err.Error())
			if !o.found {
				continue // a run that did not run says nothing
			}
		}
		if o.kill > 0 {
			kills = append(kills, ms(o.kill))
		}
		if o.found {
			found++
			xs = append(xs, ms(o.after))
			if o.kill > 0 {
				fromKill = append(fromKill, ms(o.after-o.kill))
			}
		} else {
			xs = append(xs, math.Inf(1))
		}
	}
	var kill string
	if len(kills) > 0 {
		kill = "the first SIGKILL came after the window opened, at " + fmtValues(kills, "ms")[len("runs: "):] +
			" (the fault holds acquires back and hurries the holder until the key is free on every node, cuts replication, then waits for an acquire the replicas never see)"
		if len(fromKill) > 0 {
			kill += "; from the SIGKILL to the double holder: " + fmtValues(fromKill, "ms")[len("runs: "):]
		}
	}
	ref := b.failover[k]
	refName := fmt.Sprintf("failover time, %s (kill to first acquire on the new primary, this run's failover row)", k)
	if ref == 0 {
		ref = math.NaN()
		refName += "; not measured: the failover section did not run"
	}
	setup := fmt.Sprintf("lockcheck run's default scenario (native client, kill-primary, TTL 15 s, 6 clients, 1 key, holds of 3-15 s, a tenth late), seeds 1-%d, up to %s each, stopped early once a double holder was certain", b.cfg.seeds, b.cfg.raceDuration)
	measure := "time = first double_holder finding's start minus the first kill-primary window's start (the window opens when the fault shuts the workload's gate, before the cut and the kill)"
	for _, p := range []struct {
		label string
		q     float64
	}{{"median", 0.5}, {"90th percentile", 0.9}} {
		v := percentile(xs, p.q)
		if p.q == 0.5 {
			v = median(xs)
		}
		notes := []string{}
		if len(xs) > 0 {
			unit := "ms"
			if found < len(xs) {
				unit += " (none: no double holder within the run)"
			}
			notes = append(notes, fmtValues(xs, unit))
		}
		if math.IsInf(v, 1) {
			notes = append(notes, "not measured: at this rank the run found no double holder within "+b.cfg.raceDuration.String())
		}
		if p.q == 0.9 {
			notes = append(notes, fmt.Sprintf("nearest rank over %d runs", len(xs)))
		}
		notes = append(notes, setup, measure)
		if kill != "" {
			notes = append(notes, kill)
		}
		notes = append(notes, errs...)
		b.add(Row{Name: fmt.Sprintf("time to first double holder, %s, %s", k, p.label), Unit: "ms", Value: num(v), Runs: len(xs), section: secRace,
			Reference: refName, ReferenceValue: num(ref), Note: strings.Join(notes, "; ")}.withRatio())
	}
	share := math.NaN()
	if len(xs) > 0 {
		share = float64(found) / float64(len(xs))
	}
	notes := []string{fmt.Sprintf("%d of %d runs found a double holder within %s", found, len(xs), b.cfg.raceDuration), setup}
	notes = append(notes, errs...)
	b.add(Row{Name: fmt.Sprintf("runs with a double holder, %s", k), Unit: "share of runs", Value: num(share), Runs: len(xs), section: secRace,
		Reference: "none (a share has no floor)", Note: strings.Join(notes, "; ")})
}
