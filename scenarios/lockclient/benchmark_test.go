package lockclient

import (
	"context"
	"testing"
	"time"

	"github.com/valkey-io/valkey-go"

	"github.com/lockcheck/lockcheck/history"
)

// BenchmarkClients measures lock calls per second for every client kind on
// a standalone valkey-9.1, next to raw valkey-go SET NX PX / DEL in the
// same run, and the cost of recording one call (two Recorder.Now and one
// Recorder.Add), so that recording's share of a call's latency can be
// stated. One iteration of a client is acquire, extend, release: three
// lock calls.
func BenchmarkClients(b *testing.B) {
	topo := startStandalone(b, "valkey-9.1")
	cfg := ConfigFor(topo)
	ctx := context.Background()
	const key = "lock:{bench}"

	b.Run("raw-valkey-go-set-del", func(b *testing.B) {
		c, err := valkey.NewClient(cfg.Option)
		if err != nil {
			b.Fatal(err)
		}
		defer c.Close()
		b.ResetTimer()
		for b.Loop() {
			if err := c.Do(ctx, c.B().Set().Key(key).Value("v").Nx().Px(time.Second).Build()).Error(); err != nil {
				b.Fatal(err)
			}
			if err := c.Do(ctx, c.B().Del().Key(key).Build()).Error(); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(2*float64(b.N)/b.Elapsed().Seconds(), "calls/s")
	})

	kinds := append([]string{}, Kinds()...)
	if py := pythonKindIfPresent(); py != "" {
		kinds = append(kinds, py)
	}
	for _, kind := range kinds {
		if kind == "delex" {
			continue // valkey-9.1 has no DELEX
		}
		b.Run(kindLabel(kind), func(b *testing.B) { benchCycle(b, kind, cfg, nil) })
	}
	b.Run("native-recorded", func(b *testing.B) { benchCycle(b, "native", cfg, history.NewRecorder()) })

	b.Run("recorder-add", func(b *testing.B) {
		rec := history.NewRecorder()
		n := 0
		for b.Loop() {
			if n++; n%(1<<16) == 0 {
				rec = history.NewRecorder() // bound memory; the cost of growth stays in
			}
			call := rec.Now()
			rec.Add(history.Op{Client: 1, Worker: 1, Key: key, Kind: history.Extend, Token: "0123456789abcdef0123456789abcdef01234567",
				TTLms: 1000, Outcome: history.OK, Call: call, Return: rec.Now()})
		}
	})
}

// benchCycle runs acquire, extend, release on one client; with rec it also
// records each call as the workload does.
func benchCycle(b *testing.B, kind string, cfg Config, rec *history.Recorder) {
	cfg.StderrDir = b.TempDir()
	c, err := NewClient(kind, cfg)
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	const key = "lock:{bench}"
	ttl := time.Second
	record := func(kind history.Kind, token string, call int64, r Result) {
		if rec != nil {
			rec.Add(history.Op{Client: 1, Worker: 1, Key: key, Kind: kind, Token: token, TTLms: 1000, Outcome: r.Outcome, Error: r.Err, Call: call, Return: rec.Now()})
		}
	}
	now := func() int64 {
		if rec != nil {
			return rec.Now()
		}
		return 0
	}
	b.ResetTimer()
	for b.Loop() {
		call := now()
		r := c.Acquire(ctx, key, ttl)
		record(history.Acquire, r.Token, call, r)
		if r.Outcome != history.OK {
			b.Fatalf("acquire: %+v", r)
		}
		call = now()
		e := c.Extend(ctx, key, r.Token, ttl)
		record(history.Extend, r.Token, call, e)
		if e.Outcome != history.OK {
			b.Fatalf("extend: %+v", e)
		}
		call = now()
		rel := c.Release(ctx, key, r.Token)
		record(history.Release, r.Token, call, rel)
		if rel.Outcome != history.OK {
			b.Fatalf("release: %+v", rel)
		}
	}
	b.ReportMetric(3*float64(b.N)/b.Elapsed().Seconds(), "lockcalls/s")
}
