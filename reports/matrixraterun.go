package reports

import (
	"fmt"
	"strings"
	"time"

	"github.com/lockcheck/lockcheck/measure"
)

// MatrixRateFile is the file a rate measurement (lockcheck matrix
// --repeat) writes beside its seeds' folders.
const MatrixRateFile = "matrix-rate.json"

// MatrixRateRun is matrix-rate.json: which seeds' matrices a rate
// measurement, or one shard of it, ran (each in seed-S), and how, so that
// lockcheck merge can join the shards' seed folders into the table the
// whole measurement gives. A shard runs whole matrices for its seeds:
// every N-th seed from the I-th.
type MatrixRateRun struct {
	measure.Part
	// First and N: the whole plan is the seeds First..First+N-1.
	First int64 `json:"first"`
	N     int   `json:"n"`
	// Seeds are the seeds this folder holds, in order.
	Seeds    []int64   `json:"seeds"`
	Started  time.Time `json:"started"`
	Elapsed  Millis    `json:"elapsed_ms"`
	Machine  string    `json:"machine"`
	Note     string    `json:"note,omitempty"`
	Builds   string    `json:"builds"`
	Complete bool      `json:"complete"`
}

// SeedDir is the folder of seed's matrix, under a rate measurement's.
func SeedDir(seed int64) string { return fmt.Sprintf("seed-%d", seed) }

// Measured is the table's first line: when, how long, on what machine,
// which seeds of which builds, and the headline of rows.
func (r MatrixRateRun) Measured(rows []RateRow) string {
	seeds := fmt.Sprintf("seeds %d..%d", r.First, r.First+int64(r.N)-1)
	if r.Shards > 1 {
		var list []string
		for _, s := range r.Seeds {
			list = append(list, fmt.Sprint(s))
		}
		seeds = fmt.Sprintf("shard %d of %d: seeds %s", r.Shard, r.Shards, strings.Join(list, ", "))
	}
	note := ""
	if r.Note != "" {
		note = "; " + r.Note
	}
	return fmt.Sprintf("Measured %s UTC in %s (%s%s), %s of `lockcheck matrix`'s defaults, %s; %s.",
		r.Started.UTC().Format("2006-01-02 15:04"), (time.Duration(r.Elapsed) * time.Millisecond).Round(time.Second), r.Machine, note, seeds, r.Builds, RateHeadline(rows))
}
