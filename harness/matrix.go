package harness

import (
	"context"
	"fmt"
	"hash/fnv"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/lockcheck/lockcheck/measure"
	"github.com/lockcheck/lockcheck/reports"
	"github.com/lockcheck/lockcheck/scenarios"
	"github.com/lockcheck/lockcheck/scenarios/fault"
	"github.com/lockcheck/lockcheck/scenarios/lockclient"
	"github.com/lockcheck/lockcheck/topology"
)

// Matrix is every combination of client × fault × build × topology, one
// run per combination, each on a fresh topology with one fault.
type Matrix struct {
	Builds   []MatrixBuild
	Kinds    []topology.Kind
	Clients  []string
	Faults   []string
	Duration time.Duration
	TTL      time.Duration
	// Shard and Shards, when Shards > 1, make this matrix the Shard-th
	// (from 1) of Shards: it runs every Shards-th of the runnable cells,
	// with the seeds the whole matrix gives them, and leaves the others to
	// the other shards (lockcheck merge joins the folders).
	Shard, Shards int
	// Seed is the matrix's; each run's is derived from it and the run's
	// combination (RunSeed).
	Seed    int64
	Sources topology.Sources
	// Out gets index.html, matrix.json, junit.xml and a folder per run.
	Out string
	// Log gets a line as each run starts and ends.
	Log io.Writer
	// StopOnViolation ends each run at its first violation (Options).
	StopOnViolation bool
	// Parallel is how many runs go at once, each on its own topology (1
	// when 0). kill-primary times its kill by what the run's history
	// shows (an acquire on the cut primary), not by the clock, so a busier
	// machine delays the race rather than hiding it.
	Parallel int
}

// MatrixBuild is a build and, when its image cannot be had, why.
type MatrixBuild struct {
	topology.Build
	Unavailable string
}

// matrixRun is one run of the matrix, and its cell in the index.
type matrixRun struct {
	scenario scenarios.Scenario
	cell     int
}

// ResolveBuilds says for each named build whether its image can be had.
// With no names it picks the newest Valkey build that can, and says on log
// why newer ones cannot.
func ResolveBuilds(ctx context.Context, eng *topology.Engine, want []topology.Build, src topology.Sources, log io.Writer) ([]MatrixBuild, error) {
	var out []MatrixBuild
	if len(want) > 0 {
		for _, b := range want {
			mb := MatrixBuild{Build: b}
			if img := eng.Resolve(ctx, b, src); img.Status == topology.Unavailable {
				mb.Unavailable = img.Reason + "; fix: " + img.Fix
			}
			out = append(out, mb)
		}
		return out, nil
	}
	all := topology.Builds()
	for i := len(all) - 1; i >= 0; i-- {
		b := all[i]
		if !strings.HasPrefix(b.Name, "valkey-") {
			continue
		}
		img := eng.Resolve(ctx, b, src)
		if img.Status != topology.Unavailable {
			fmt.Fprintf(log, "matrix: newest available Valkey build: %s (%s %s)\n", b.Name, img.Status, img.Ref)
			return []MatrixBuild{{Build: b}}, nil
		}
		fmt.Fprintf(log, "matrix: %s is unavailable: %s\n", b.Name, img.Reason)
	}
	return nil, fmt.Errorf("no Valkey build is available: make images builds them, lockcheck images says why")
}

// Scenarios are the matrix's runs in order: one per combination whose
// fault fits its topology and whose build's image can be had, each with
// its seed. A shard's are every Shards-th of them.
func (m *Matrix) Scenarios() []scenarios.Scenario {
	_, runs := m.layout()
	out := make([]scenarios.Scenario, len(runs))
	for i, r := range runs {
		out[i] = r.scenario
	}
	return out
}

// Scenario is one combination's run: lockcheck run's defaults with the
// matrix's duration and TTL and the combination's own seed.
func (m *Matrix) Scenario(build string, kind topology.Kind, client, fault string) scenarios.Scenario {
	return scenarios.Scenario{
		ServerSettings:  scenarios.ServerSettings{Server: build, Topology: kind},
		ClientSettings:  scenarios.ClientSettings{Client: client},
		FaultSettings:   scenarios.FaultSettings{Faults: []string{fault}},
		TrafficSettings: scenarios.TrafficSettings{Duration: m.Duration, TTL: m.TTL, Seed: m.RunSeed(build, kind, client, fault)},
	}
}

// layout makes the index's rows, columns and cells, and the runs to make:
// a cell is n/a where the fault does not fit the topology, unavailable
// where the build's image cannot be had, another shard's where the matrix
// is sharded, and not run until its run ends.
func (m *Matrix) layout() (*reports.Index, []matrixRun) {
	idx := &reports.Index{Generated: time.Now().UTC().Format(time.RFC3339), Seed: m.Seed,
		Duration: m.Duration.String(), TTL: m.TTL.String(), Elapsed: "0s", Shard: m.Shard, Shards: m.Shards}
	for _, b := range m.Builds {
		for _, k := range m.Kinds {
			idx.Columns = append(idx.Columns, reports.IndexColumn{Server: b.Name, Topology: string(k), Reason: b.Unavailable})
		}
	}
	for _, c := range m.Clients {
		for _, f := range m.Faults {
			idx.Rows = append(idx.Rows, reports.IndexRow{Client: c, Fault: f})
		}
	}
	var runs []matrixRun
	runnable := 0
	for _, b := range m.Builds {
		for _, k := range m.Kinds {
			for _, c := range m.Clients {
				for _, f := range m.Faults {
					cell := reports.IndexCell{Server: b.Name, Topology: string(k), Client: c, Fault: f, Expected: ExpectedOutcome(c, f)}
					fault, err := fault.Lookup(f)
					switch {
					case err != nil:
						cell.Outcome, cell.Reason = reports.CellError, err.Error()
					case !fault.Available(k):
						cell.Outcome, cell.Reason = reports.CellNA, fmt.Sprintf("%s does not fit a %s topology", f, k)
					case b.Unavailable != "":
						cell.Outcome, cell.Reason = reports.CellUnavailable, b.Unavailable
					default:
						s := m.Scenario(b.Name, k, c, f)
						cell.Seed = s.Seed
						cell.Dir = scenarios.SafeName(fmt.Sprintf("%s-%s-%s-%s", b.Name, k, c, f))
						cell.Replay = scenarios.ReplayCommand(filepath.Join(m.Out, cell.Dir))
						mine := measure.Shard{I: m.Shard, N: m.Shards}.Mine(runnable)
						runnable++
						if !mine {
							cell.Outcome, cell.Reason = reports.CellOtherShard, "run by another shard"
							break
						}
						cell.Outcome, cell.Reason = reports.CellNotRun, "the matrix stopped before this run"
						runs = append(runs, matrixRun{scenario: s, cell: len(idx.Cells)})
					}
					idx.Cells = append(idx.Cells, cell)
				}
			}
		}
	}
	return idx, runs
}

// ExpectedOutcome is what a cell of client under fault must show, when
// lockcheck knows: under a fault that hands one lock to two clients by
// design (fault.HandsLockTwice), a built-in client that draws fences
// shows the double holder its fence stopped, any other built-in client a
// violation. Elsewhere, and for an external adapter, nothing is expected.
func ExpectedOutcome(client, faultName string) reports.CellOutcome {
	if !fault.HandsLockTwice(faultName) || !lockclient.Known(client) || strings.HasPrefix(client, lockclient.ExternalPrefix) {
		return ""
	}
	if lockclient.DrawsFences(client) {
		return reports.CellFenced
	}
	return reports.CellViolated
}

// RunSeed derives a run's seed from the matrix's seed and the run's
// combination alone, so that a run replays the same with other
// combinations added or left out.
func (m *Matrix) RunSeed(build string, kind topology.Kind, client, fault string) int64 {
	h := fnv.New64a()
	fmt.Fprintf(h, "%d/%s/%s/%s/%s", m.Seed, build, kind, client, fault)
	return int64(h.Sum64()%999_999_999) + 1
}
