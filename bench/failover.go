package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/valkey-io/valkey-go"

	"github.com/lockcheck/lockcheck/topology"
)

// failoverKinds are the topologies that fail over on their own.
var failoverKinds = []topology.Kind{topology.Sentinel, topology.Cluster}

// failoverSection kills the primary of a lock key with a plain Node.Kill
// and times until a lock acquire (SET NX PX through the topology's
// valkey-go client) succeeds on the new primary. Each run has a fresh
// topology, whose start-up time goes to the start-up rows.
func (b *bench) failoverSection(ctx context.Context) error {
	times := map[topology.Kind][]float64{}
	notes := map[topology.Kind][]string{}
	var errs []error
	for i := range b.cfg.runs {
		for _, k := range failoverKinds {
			if ctx.Err() != nil {
				break
			}
			t, err := b.start(ctx, k)
			if err != nil {
				errs = append(errs, err)
				b.startErr[k] = err.Error()
				notes[k] = append(notes[k], "start failed: "+err.Error())
				continue
			}
			b.startup[k] = append(b.startup[k], ms(t.Startup))
			d, attempts, err := b.failoverOnce(ctx, t, i)
			b.stop(ctx, t)
			if err != nil {
				errs = append(errs, err)
				notes[k] = append(notes[k], err.Error())
				continue
			}
			b.log.Info("failover", "kind", k, "run", i+1, "ms", d.Milliseconds(), "attempts", attempts)
			times[k] = append(times[k], ms(d))
		}
	}
	detect := map[topology.Kind]string{
		topology.Sentinel: "Sentinel down-after-milliseconds (detection timeout; topology's default, set explicitly)",
		topology.Cluster:  "cluster-node-timeout (detection timeout; topology's default, set explicitly)",
	}
	for _, k := range failoverKinds {
		xs := times[k]
		r := Row{Name: fmt.Sprintf("failover, %s (kill primary to first lock acquire on the new primary)", k), Unit: "ms",
			Runs: len(xs), section: secFailover, Reference: detect[k], ReferenceValue: num(ms(detection)), Value: num(median(xs))}
		var n []string
		if len(xs) > 0 {
			n = append(n, fmtValues(xs, "ms"))
			b.failover[k] = median(xs)
		} else {
			n = append(n, "not measured")
		}
		n = append(n, notes[k]...)
		n = append(n, "from Node.Kill's return (SIGKILL delivered) to the first SET NX PX answered OK; attempts every 10 ms with a 250 ms deadline each")
		r.Note = strings.Join(n, "; ")
		b.add(r.withRatio())
	}
	return errors.Join(errs...)
}

// failoverOnce kills the primary that holds the lock key's slot and times
// until an acquire succeeds. Every attempt takes a new key with the same
// hash tag, so a lost reply cannot turn a later attempt into a refusal.
func (b *bench) failoverOnce(ctx context.Context, t *topology.Topology, run int) (time.Duration, int, error) {
	opt := t.ClientOption()
	opt.DisableRetry = true
	c, err := valkey.NewClient(opt)
	if err != nil {
		return 0, 0, fmt.Errorf("%s: client: %w", t.Kind, err)
	}
	defer c.Close()
	tag := fmt.Sprintf("{bench%d}", run)
	acquire := func(n int) error {
		actx, cancel := context.WithTimeout(ctx, 250*time.Millisecond)
		defer cancel()
		key := fmt.Sprintf("lock:%s:%d", tag, n)
		return c.Do(actx, c.B().Set().Key(key).Value("bench").Nx().PxMilliseconds(10_000).Build()).Error()
	}
	// The client knows the topology and has its connections before the kill.
	if err := acquire(-1); err != nil {
		return 0, 0, fmt.Errorf("%s: acquire before the kill: %w", t.Kind, err)
	}
	key := "lock:" + tag
	old, err := t.Primary(ctx, key)
	if err != nil {
		return 0, 0, fmt.Errorf("%s: %w", t.Kind, err)
	}
	if err := old.Kill(ctx); err != nil {
		return 0, 0, err
	}
	killed := time.Now()
	deadline := killed.Add(60 * time.Second)
	var last error
	for n := 0; ; n++ {
		if err := acquire(n); err == nil {
			d := time.Since(killed)
			now, perr := t.Primary(ctx, key)
			if perr == nil && now == old {
				return 0, n + 1, fmt.Errorf("%s: acquire succeeded but %s is still named primary", t.Kind, old.Name)
			}
			return d, n + 1, nil
		} else {
			last = err
		}
		if time.Now().After(deadline) {
			return 0, n + 1, fmt.Errorf("%s: no acquire succeeded within 60 s of the kill (last: %v)", t.Kind, last)
		}
		if err := sleepCtx(ctx, 10*time.Millisecond); err != nil {
			return 0, n + 1, err
		}
	}
}
