package checker

import (
	"context"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"

	"github.com/lockcheck/lockcheck/bench/baseline"
	"github.com/lockcheck/lockcheck/history"
	"github.com/lockcheck/lockcheck/history/synth"
)

// benchSizes are the generated loads: operations over keys, five clients
// per key as in the first measurement of porcupine alone.
var benchSizes = []struct{ ops, keys int }{
	{10_000, 10}, {10_000, 1000},
	{100_000, 10}, {100_000, 1000},
	{1_000_000, 10}, {1_000_000, 100}, {1_000_000, 1000},
}

var (
	benchMu      sync.Mutex
	benchHistory = map[[2]int]*history.History{}
)

func benchLoad(ops, keys int) *history.History {
	benchMu.Lock()
	defer benchMu.Unlock()
	k := [2]int{ops, keys}
	if h, ok := benchHistory[k]; ok {
		return h
	}
	h := synth.Generate(1, ops, keys, 5*keys)
	benchHistory[k] = h
	return h
}

// BenchmarkCheck runs every check, segmented and in parallel, on generated
// legal histories.
func BenchmarkCheck(b *testing.B) {
	for _, s := range benchSizes {
		b.Run(fmt.Sprintf("ops=%d/keys=%d", s.ops, s.keys), func(b *testing.B) {
			h := benchLoad(s.ops, s.keys)
			b.ReportAllocs()
			b.ResetTimer()
			var res *Result
			for range b.N {
				var err error
				if res, err = Run(context.Background(), h, Options{PictureOps: -1}); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			if res.Verdict != Safe {
				b.Fatalf("generated history not safe: %s", res.Summary)
			}
			b.ReportMetric(float64(s.ops)*float64(b.N)/b.Elapsed().Seconds(), "ops/s")
			b.ReportMetric(float64(res.Segments), "segments")
			b.ReportMetric(float64(res.Porcupine), "porcupine-segments")
		})
	}
}

// BenchmarkPorcupineOnly checks the same histories with porcupine alone and
// a plain lock model, for comparison. It gives up after 60 s like the first
// measurement. Porcupine's memory grows with the square of a partition's
// length (a bitset of the partition per cached step), so loads of 100k or
// more operations per key run only with LOCKCHECK_BENCH_PLAIN_1M=1; the first
// measurement took 115 s and 16.5 GiB for 1M operations over 10 keys.
func BenchmarkPorcupineOnly(b *testing.B) {
	for _, s := range benchSizes {
		b.Run(fmt.Sprintf("ops=%d/keys=%d", s.ops, s.keys), func(b *testing.B) {
			if s.ops/s.keys >= 100_000 && os.Getenv("LOCKCHECK_BENCH_PLAIN_1M") == "" {
				b.Skip("porcupine alone on 100k operations per key takes minutes and >16 GiB (measured: 115 s, 16.5 GiB for 1M over 10 keys); set LOCKCHECK_BENCH_PLAIN_1M=1 to run it")
			}
			h := benchLoad(s.ops, s.keys)
			ops := baseline.Ops(h)
			m := baseline.Model()
			b.ReportAllocs()
			b.ResetTimer()
			var res porcupine.CheckResult
			for range b.N {
				res = porcupine.CheckOperationsTimeout(m, ops, 60*time.Second)
			}
			b.StopTimer()
			if res == porcupine.Illegal {
				b.Fatalf("plain model calls a generated history illegal")
			}
			if res == porcupine.Unknown {
				b.ReportMetric(1, "timed-out")
			}
			b.ReportMetric(float64(s.ops)*float64(b.N)/b.Elapsed().Seconds(), "ops/s")
		})
	}
}
