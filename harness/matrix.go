package harness

import (
	"context"
	"fmt"
	"hash/fnv"
	"io"
	"strings"
	"time"

	"github.com/lockcheck/lockcheck/reports"
	"github.com/lockcheck/lockcheck/scenarios"
	"github.com/lockcheck/lockcheck/topology"
)

// Matrix is every combination of client × fault × build × topology, one
// run per combination, each on a fresh topology with one fault.
type Matrix struct {
	Builds   []MatrixBuild
	Kinds    []topology.Kind
	Clients  []string
	Faults   []scenarios.Fault
	Duration time.Duration
	TTL      time.Duration
	// Seed is the matrix's; each run's is derived from it and the run's
	// combination (RunSeed).
	Seed    int64
	Sources topology.Sources
	// Out gets index.html, matrix.json, junit.xml and a folder per run.
	Out string
	// Log gets a line as each run starts and ends.
	Log io.Writer
}

// MatrixBuild is a build and, when its image cannot be had, why.
type MatrixBuild struct {
	topology.Build
	Unavailable string
}

// matrixRun is one run of the matrix, and its cell in the index.
type matrixRun struct {
	build  topology.Build
	kind   topology.Kind
	client string
	fault  scenarios.Fault
	cell   int
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

// layout makes the index's rows, columns and cells, and the runs to make:
// a cell is n/a where the fault does not fit the topology, unavailable
// where the build's image cannot be had, and not run until its run ends.
func (m *Matrix) layout() (*reports.Index, []matrixRun) {
	idx := &reports.Index{Generated: time.Now().UTC().Format(time.RFC3339), Seed: m.Seed,
		Duration: m.Duration.String(), TTL: m.TTL.String(), Elapsed: "0s"}
	for _, b := range m.Builds {
		for _, k := range m.Kinds {
			idx.Columns = append(idx.Columns, reports.IndexColumn{Server: b.Name, Topology: string(k), Reason: b.Unavailable})
		}
	}
	for _, c := range m.Clients {
		for _, f := range m.Faults {
			idx.Rows = append(idx.Rows, reports.IndexRow{Client: c, Fault: f.Name()})
		}
	}
	var runs []matrixRun
	for _, b := range m.Builds {
		for _, k := range m.Kinds {
			for _, c := range m.Clients {
				for _, f := range m.Faults {
					cell := reports.IndexCell{Server: b.Name, Topology: string(k), Client: c, Fault: f.Name()}
					switch {
					case !f.Available(k):
						cell.Outcome, cell.Reason = reports.CellNA, fmt.Sprintf("%s does not fit a %s topology", f.Name(), k)
					case b.Unavailable != "":
						cell.Outcome, cell.Reason = reports.CellUnavailable, b.Unavailable
					default:
						cell.Outcome, cell.Reason = reports.CellNotRun, "the matrix stopped before this run"
						r := matrixRun{build: b.Build, kind: k, client: c, fault: f, cell: len(idx.Cells)}
						cell.Seed = m.RunSeed(b.Name, k, c, f.Name())
						cell.Dir = SafeName(fmt.Sprintf("%s-%s-%s-%s", b.Name, k, c, f.Name()))
						cell.Replay = m.replay(r, cell.Seed)
						runs = append(runs, r)
					}
					idx.Cells = append(idx.Cells, cell)
				}
			}
		}
	}
	return idx, runs
}

// RunSeed derives a run's seed from the matrix's seed and the run's
// combination alone, so that a run replays the same with other
// combinations added or left out.
func (m *Matrix) RunSeed(build string, kind topology.Kind, client, fault string) int64 {
	h := fnv.New64a()
	fmt.Fprintf(h, "%d/%s/%s/%s/%s", m.Seed, build, kind, client, fault)
	return int64(h.Sum64()%999_999_999) + 1
}

// replay is the lockcheck run command that repeats one run.
func (m *Matrix) replay(r matrixRun, seed int64) string {
	client := r.client
	if strings.ContainsAny(client, " \t'\"") {
		client = fmt.Sprintf("%q", client)
	}
	return fmt.Sprintf("lockcheck run --server %s --topology %s --client %s --fault %s --duration %s --ttl %s --seed %d",
		r.build.Name, r.kind, client, r.fault.Name(), m.Duration, m.TTL, seed)
}
