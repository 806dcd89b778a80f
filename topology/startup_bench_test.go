package topology_test

import (
	"context"
	"testing"
	"time"

	"github.com/lockcheck/lockcheck/topology"
)

// BenchmarkStartup measures the time from Start's call to a healthy
// topology, per kind, on the newest Valkey build present; teardown is not
// counted. Run: go test -run '^$' -bench Startup -benchtime 3x ./topology/
func BenchmarkStartup(b *testing.B) {
	ctx := context.Background()
	eng, err := topology.Connect(ctx, nil)
	if err != nil {
		b.Skip(err)
	}
	defer eng.Close()
	defer eng.RemoveOnInterrupt()()
	build, img := newestPresent(ctx, eng)
	if img == "" {
		b.Skip("no Valkey image is present: lockcheck images --build")
	}
	for _, kind := range topology.Kinds() {
		b.Run(string(kind), func(b *testing.B) {
			var total time.Duration
			for b.Loop() {
				t, err := topology.Start(ctx, eng, build, kind, topology.WithImage(img))
				if err != nil {
					b.Fatal(err)
				}
				total += t.Startup
				b.StopTimer()
				if err := t.Terminate(ctx); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
			}
			b.ReportMetric(float64(total.Milliseconds())/float64(b.N), "ms/healthy")
		})
	}
}

func newestPresent(ctx context.Context, eng *topology.Engine) (topology.Build, string) {
	var build topology.Build
	var ref string
	for _, b := range topology.Builds() {
		if b.Family != topology.Valkey {
			continue
		}
		if img := eng.Resolve(ctx, b, topology.Sources{}); img.Status == topology.Present {
			build, ref = b, img.Ref
		}
	}
	return build, ref
}
