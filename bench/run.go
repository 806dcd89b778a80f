package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/lockcheck/lockcheck/topology"
)

// bench is one run of the program: the engine, the build under test, and
// what earlier sections measured that later ones use as a reference.
type bench struct {
	cfg   config
	log   *slog.Logger
	eng   *topology.Engine
	build topology.Build
	image string
	// runID labels the containers the program starts itself (the docker run
	// floor), for removal on exit.
	runID string
	// startup collects Startup per kind; failover topologies add theirs.
	startup  map[topology.Kind][]float64
	startErr map[topology.Kind]string
	// floor collects the bare docker run times, ms, by how many containers
	// were started at once (1, and each topology's node count).
	floor map[int][]float64
	// failover is the median failover time per kind, ms.
	failover map[topology.Kind]float64
	rows     []Row
	begin    time.Time
}

func run(ctx context.Context, cfg config, log *slog.Logger) (err error) {
	b := &bench{cfg: cfg, log: log, runID: "bench-" + randomHex(4), begin: time.Now(),
		startup: map[topology.Kind][]float64{}, startErr: map[topology.Kind]string{}, failover: map[topology.Kind]float64{},
		floor: map[int][]float64{}}
	machine := describeMachine(ctx)
	if cfg.needsServer() {
		b.eng, err = topology.Connect(ctx, log)
		if err != nil {
			return err
		}
		defer b.eng.Close()
		defer func() {
			// Whatever a section left behind: its topologies (each removes
			// its own on the way out; this is the net under it) and the
			// floor's containers.
			cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Minute)
			defer cancel()
			err = errors.Join(err, b.eng.RemoveStarted(cctx), b.eng.RemoveRun(cctx, b.runID))
		}()
		if err := b.pickBuild(ctx); err != nil {
			return err
		}
		machine.Server = fmt.Sprintf("%s (%s)", b.build.Name, b.image)
	} else {
		machine.Server = "none: the sections run need no server"
	}
	log.Info("bench", "server", b.build.Name, "image", b.image, "quick", cfg.quick, "runs", cfg.runs, "seeds", cfg.seeds)

	sections := []struct {
		name string
		f    func(context.Context) error
	}{
		{"startup", b.startupSection},
		{"failover", b.failoverSection},
		{"throughput", b.throughputSection},
		{"checker", b.checkerSection},
		{"recheck", b.recheckSection},
		{"race", b.raceSection},
		{"memory", b.memorySection},
		{"glide-close", b.glideCloseSection}, // last: hung cores spin on
	}
	for _, s := range sections {
		if !cfg.wants(s.name) {
			continue
		}
		if ctx.Err() != nil {
			break
		}
		start := time.Now()
		log.Info("section start", "section", s.name, "elapsed", time.Since(b.begin).Round(time.Second))
		if err := s.f(ctx); err != nil {
			// A section that fails leaves rows saying why; the others run.
			log.Error("section failed", "section", s.name, "err", err)
		}
		log.Info("section done", "section", s.name, "took", time.Since(start).Round(time.Second))
	}
	if cfg.wants("startup") || cfg.wants("failover") {
		b.startupRows()
	}
	machine.Wall = time.Since(b.begin).Round(time.Second).String()
	machine.LoadEnd = loadAvg()
	if ctx.Err() != nil {
		machine.Note = "interrupted: the table is partial"
	}
	ordered := orderRows(b.rows)
	if err := os.MkdirAll(cfg.out, 0o755); err != nil {
		return fmt.Errorf("results folder: %w", err)
	}
	if err := writeJSON(filepath.Join(cfg.out, "results.json"), ordered); err != nil {
		return err
	}
	if err := writeMarkdown(filepath.Join(cfg.out, "results.md"), ordered, machine, cfg); err != nil {
		return err
	}
	log.Info("results written", "md", filepath.Join(cfg.out, "results.md"), "json", filepath.Join(cfg.out, "results.json"), "wall", machine.Wall)
	if ctx.Err() != nil {
		return errors.New("interrupted")
	}
	return nil
}

// pickBuild chooses the server build: the one named by -server, else the
// newest Valkey build whose image is present, and makes its image present.
func (b *bench) pickBuild(ctx context.Context) error {
	if b.cfg.server != "" {
		bl, err := topology.Lookup(b.cfg.server)
		if err != nil {
			return err
		}
		img, err := b.eng.Obtain(ctx, bl, topology.Sources{}, os.Stderr)
		if err != nil {
			return err
		}
		b.build, b.image = bl, img.Ref
		return nil
	}
	for _, bl := range topology.Builds() {
		if bl.Family != topology.Valkey {
			continue
		}
		if img := b.eng.Resolve(ctx, bl, topology.Sources{}); img.Status == topology.Present {
			b.build, b.image = bl, img.Ref
		}
	}
	if b.image == "" {
		return errors.New("no Valkey image is present: make images (or lockcheck images --build), or pass -server")
	}
	return nil
}

// detection is Sentinel's down-after and the cluster's node timeout, set
// explicitly (they are also topology's defaults) so that the failover
// rows' reference is what the servers ran with.
const detection = time.Second

// start brings up a topology of kind and logs its start-up time.
func (b *bench) start(ctx context.Context, kind topology.Kind) (*topology.Topology, error) {
	return b.startWith(ctx, kind)
}

// startWith is start with options of its own (the image and the
// detection settings are bench's).
func (b *bench) startWith(ctx context.Context, kind topology.Kind, opts ...topology.Option) (*topology.Topology, error) {
	opts = append([]topology.Option{topology.WithImage(b.image), topology.WithDownAfter(detection), topology.WithNodeTimeout(detection)}, opts...)
	t, err := topology.Start(ctx, b.eng, b.build, kind, opts...)
	if err != nil {
		return nil, err
	}
	b.log.Info("topology up", "kind", kind, "startup_ms", t.Startup.Milliseconds(), "run", t.RunID)
	return t, nil
}

// stop removes a topology with a deadline of its own, also after Ctrl-C.
func (b *bench) stop(ctx context.Context, t *topology.Topology) {
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
	defer cancel()
	if err := t.Terminate(cctx); err != nil {
		b.log.Warn("teardown", "run", t.RunID, "err", err)
	}
}

func (b *bench) add(r Row) {
	b.rows = append(b.rows, r)
	b.log.Info("row", "name", r.Name, "value", fmtPtr(r.Value), "unit", r.Unit, "reference", fmtPtr(r.ReferenceValue), "ratio", fmtPtr(r.Ratio))
}

func randomHex(n int) string {
	p := make([]byte, n)
	rand.Read(p)
	return hex.EncodeToString(p)
}
