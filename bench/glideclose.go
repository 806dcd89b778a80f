package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/lockcheck/lockcheck/history"
	"github.com/lockcheck/lockcheck/scenarios/lockclient"
	"github.com/lockcheck/lockcheck/topology"
)

// glideCloseSection measures how often Valkey GLIDE's Go client does not
// return from Close after a cluster primary under it died: on the report
// card, 4 of 40 GLIDE runs under kill-primary and restart-primary met a
// Close that blocked for good, its core spinning, which no test can wait
// for. Each round starts a cluster, connects -glide-clients GLIDE
// clients (through the late-reply tap, as the card's runs do, or
// directly with -glide-direct), keeps them acquiring and releasing one
// key, does to the key's primary what each of -glide-ways says (killed,
// restarted without its data, or none: the control) and, once the
// clients have met the change, closes them all at once. A Close that has
// not returned within lockclient's bound counts; its core stays running
// in this process, so the rounds after it run on a busier machine (the
// row's note says so: give each way a process of its own for clean
// figures).
func (b *bench) glideCloseSection(ctx context.Context) error {
	var errs []error
	via := "through the late-reply tap"
	if b.cfg.glideDirect {
		via = "dialled directly"
	}
	for _, way := range strings.Split(b.cfg.glideWays, ",") {
		var closes, hung, rounds int
		before := lockclient.LeftRunning()
		for i := range b.cfg.runs {
			if ctx.Err() != nil {
				break
			}
			c, h, err := b.glideCloseOnce(ctx, i, way)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			closes, hung, rounds = closes+c, hung+h, rounds+1
			b.log.Info("glide close", "round", i+1, "primary", way, "closes", c, "did_not_return", h, "left_running", lockclient.LeftRunning())
		}
		r := Row{Name: fmt.Sprintf("GLIDE Close after a cluster primary was %s, %s (calls that did not return)", glideWays[way], via), Unit: "closes",
			Runs: rounds, section: secGlideClose}
		if rounds > 0 {
			r.Value = num(float64(hung))
		}
		note := []string{fmt.Sprintf("%d of %d Close calls did not return within 10 s, over %d rounds of %d clients", hung, closes, rounds, b.cfg.glideClients)}
		if before > 0 {
			note = append(note, fmt.Sprintf("measured beside %d GLIDE cores left running by earlier rounds in this process", before))
		}
		r.Note = strings.Join(note, "; ")
		b.add(r)
	}
	return errors.Join(errs...)
}

// glideWays are what a glide-close round does to the key's primary: kill
// it (kill-primary), restart it without its data (restart-primary), or
// nothing (the control).
var glideWays = map[string]string{"killed": "killed", "restarted": "restarted without its data", "none": "left alone"}

// glideCloseOnce is one round on a cluster of its own: the clients
// acquire and release while the key's primary is taken away, go on until
// the cluster has promoted its replica (or the restarted primary is back)
// and a few seconds after, then are closed together.
func (b *bench) glideCloseOnce(ctx context.Context, round int, way string) (closes, hung int, err error) {
	t, err := b.start(ctx, topology.Cluster)
	if err != nil {
		return 0, 0, err
	}
	defer b.stop(ctx, t)
	cfg := lockclient.ConfigFor(t)
	cfg.Timeout = time.Second
	if !b.cfg.glideDirect {
		cfg.Late = &lockclient.LateReply{}
	}
	clients, err := connectGlide(cfg, b.cfg.glideClients)
	if err != nil {
		return 0, 0, fmt.Errorf("round %d: %w", round+1, err)
	}
	key := fmt.Sprintf("lock:{glide%d}", round)
	lctx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	for _, c := range clients {
		wg.Go(func() {
			for lctx.Err() == nil {
				cctx, cancel := context.WithTimeout(lctx, cfg.Timeout)
				if r := c.Acquire(cctx, key, 5*time.Second); r.Outcome == history.OK {
					c.Release(cctx, key, r.Token)
				}
				cancel()
				sleepCtx(lctx, 20*time.Millisecond)
			}
		})
	}
	fail := func(err error) (int, int, error) {
		stop()
		wg.Wait()
		closeTogether(clients)
		return 0, 0, fmt.Errorf("round %d: %w", round+1, err)
	}
	if err := sleepCtx(ctx, 2*time.Second); err != nil {
		return fail(err)
	}
	p, err := t.Primary(ctx, key)
	if err != nil {
		return fail(err)
	}
	switch way {
	case "restarted":
		err = p.Restart(ctx, false)
	case "killed":
		err = p.Kill(ctx)
	}
	if err != nil {
		return fail(err)
	}
	// a killed primary's replica is promoted after the node timeout
	// (detection, set by start); a restarted one is back at once
	if err := sleepCtx(ctx, 2*detection+5*time.Second); err != nil {
		return fail(err)
	}
	stop()
	wg.Wait()
	return len(clients), closeTogether(clients), nil
}

// connectGlide connects n GLIDE clients, or none.
func connectGlide(cfg lockclient.Config, n int) ([]lockclient.Client, error) {
	var clients []lockclient.Client
	for j := range n {
		c, err := lockclient.NewClient("glide", cfg)
		if err != nil {
			for _, c := range clients {
				c.Close()
			}
			return nil, fmt.Errorf("client %d: %w", j, err)
		}
		clients = append(clients, c)
	}
	return clients, nil
}

// closeTogether closes every client at once and counts the Close calls
// that did not return within lockclient's bound.
func closeTogether(clients []lockclient.Client) (hung int) {
	results := make([]error, len(clients))
	var wg sync.WaitGroup
	for j, c := range clients {
		wg.Go(func() { results[j] = c.Close() })
	}
	wg.Wait()
	for _, e := range results {
		if e != nil {
			hung++
		}
	}
	return hung
}
