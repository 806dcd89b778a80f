package suites

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	"github.com/onsi/ginkgo/v2/reporters"
	. "github.com/onsi/gomega"

	"github.com/lockcheck/lockcheck/topology"
)

// Env is what every suite shares: the Docker engine and each build's image
// or the reason it has none.
type Env struct {
	Engine    *topology.Engine
	Available map[string]Available
	// current is the topology the running spec started (or its Ordered
	// container did), whose logs a failed spec keeps.
	current *topology.Topology
	// removals are the topologies being torn down behind the next spec;
	// the suite waits for them at its end.
	removals removals
}

// removals tears topologies down in the background: a spec need not wait
// for the last one's containers and network to go, and the suite's end
// waits for all of them and fails on any that did not.
type removals struct {
	wg   sync.WaitGroup
	mu   sync.Mutex
	errs []error
}

func (r *removals) remove(t *topology.Topology) {
	r.wg.Go(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		if err := t.Terminate(ctx); err != nil {
			r.mu.Lock()
			r.errs = append(r.errs, err)
			r.mu.Unlock()
		}
	})
}

// wait waits for every removal and returns their errors.
func (r *removals) wait() error {
	r.wg.Wait()
	r.mu.Lock()
	defer r.mu.Unlock()
	return errors.Join(r.errs...)
}

// JUnitDir is where each suite writes its JUnit file, from the suite's own
// folder (suites/NAME): the repository's out/suites, beside the other
// outputs of make. Each spec's run folder goes below it (RunDir).
var JUnitDir = filepath.Join("..", "..", "out", "suites")

// RunDir is the current spec's run folder, JUnitDir/SUITE/SPEC: what a
// person opens when the spec failed (report.html, history.json, the
// nodes' logs). It is emptied first, so it holds the spec's last run.
func RunDir() string {
	dir := specDir()
	Expect(os.RemoveAll(dir)).To(Succeed())
	Expect(os.MkdirAll(dir, 0o755)).To(Succeed())
	AddReportEntry("run folder", dir)
	return dir
}

// specDir is the current spec's run folder, as it is.
func specDir() string {
	wd, err := os.Getwd()
	Expect(err).NotTo(HaveOccurred())
	name := strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '.' {
			return r
		}
		return '_'
	}, CurrentSpecReport().FullText())
	return filepath.Join(JUnitDir, filepath.Base(wd), name[:min(len(name), 150)])
}

// Setup registers the suite-level setup every suite needs: connect to the
// engine, obtain the images (building the offline ones), and at the end
// remove whatever this suite's specs left behind, and nothing else. After
// the suite, its JUnit file goes to JUnitDir/NAME.junit.xml, NAME being
// the suite's folder, so that CI shows every spec, passed, failed or
// skipped with its reason.
func Setup() *Env {
	env := &Env{Available: map[string]Available{}}
	ReportAfterSuite("junit", func(r Report) {
		wd, err := os.Getwd()
		Expect(err).NotTo(HaveOccurred())
		Expect(os.MkdirAll(JUnitDir, 0o755)).To(Succeed())
		Expect(reporters.GenerateJUnitReport(r, filepath.Join(JUnitDir, filepath.Base(wd)+".junit.xml"))).To(Succeed())
	})
	AfterEach(func(ctx SpecContext) {
		if CurrentSpecReport().Failed() && env.current != nil {
			KeepLogs(ctx, env.current, "node logs")
		}
	}, NodeTimeout(time.Minute))
	BeforeSuite(func(ctx SpecContext) {
		topology.Defaults()
		var err error
		env.Engine, err = topology.Connect(ctx, nil)
		Expect(err).NotTo(HaveOccurred(), "the suites need a Docker engine")
		for _, a := range ObtainAll(ctx, env.Engine, GinkgoWriter) {
			env.Available[a.Build.Name] = a
			if a.Image == "" {
				AddReportEntry("unavailable "+a.Build.Name, a.Reason)
			}
		}
		DeferCleanup(func(ctx SpecContext) {
			Expect(env.removals.wait()).To(Succeed(), "tearing the specs' topologies down")
			Expect(env.Engine.RemoveStarted(ctx)).To(Succeed())
			env.Engine.Close()
		}, NodeTimeout(3*time.Minute))
	}, NodeTimeout(20*time.Minute))
	return env
}

// Start starts kind on a build for the current spec (or Ordered container)
// and removes it afterwards; an unavailable build skips with its reason.
func (e *Env) Start(ctx context.Context, build string, kind topology.Kind, opts topology.Options) *topology.Topology {
	a := e.Available[build]
	if a.Image == "" {
		Skip("unavailable: " + a.Reason)
	}
	t, err := topology.Start(ctx, e.Engine, a.Build, kind, topology.WithImage(a.Image), topology.WithOptions(opts))
	Expect(err).NotTo(HaveOccurred())
	e.current = t
	DeferCleanup(func() {
		e.current = nil
		e.removals.remove(t)
	})
	return t
}
