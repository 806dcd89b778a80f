// Command bench measures lockcheck on the machine it runs on and writes
// bench/results.md and bench/results.json: start-up, failover, workload
// throughput, checker speed, time to the first double holder and peak
// memory, each next to a reference measured in the same run (a bare docker
// run, the configured detection timeout, valkey-benchmark, porcupine
// alone). It is a table, not a test: nothing passes or fails.
//
//	go run ./bench                  the full run (make bench): 9 min on 2 cores, 20 at most
//	go run ./bench -quick           1 repetition, short durations (about 2 min)
//	go run ./bench -only checker    one section (startup, failover,
//	                                throughput, checker, race, memory,
//	                                glide-close: only when named)
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"time"
)

// config is the program's flags.
type config struct {
	quick   bool
	runs    int
	seeds   int
	only    string
	server  string
	out     string
	clients int
	// glideClients are the GLIDE clients of a glide-close round,
	// glideWays what the rounds do to the primary, glideDirect whether
	// the clients dial the servers without the late-reply tap.
	glideClients int
	glideWays    string
	glideDirect  bool
	// throughput and memory workloads
	tpDuration  time.Duration
	benchN      int
	memDuration time.Duration
	// checker sizes and porcupine's caps
	checkerKeys  int
	sizes        []int
	porcTimeout  time.Duration
	porcMemMB    int
	raceDuration time.Duration

	// child runs one measurement in a process of its own (porcupine,
	// memory): set by the parent, not by users.
	child string
	ops   int
	image string
	dir   string
	// checkOps is the size of the history lockcheck check is timed on.
	checkOps int
}

func (c *config) register(fs *flag.FlagSet) {
	fs.BoolVar(&c.quick, "quick", false, "tiny parameters to try the program: 1 repetition, 1 seed, short durations, checker sizes divided by 10 (flags given explicitly win)")
	fs.IntVar(&c.runs, "runs", 3, "repetitions of each measurement (the median is reported)")
	fs.IntVar(&c.seeds, "seeds", 4, "seeded kill-primary runs per topology for the time to the first double holder")
	fs.StringVar(&c.only, "only", "", "comma-separated sections to run (startup, failover, throughput, checker, recheck, race, memory, glide-close); default all but glide-close")
	fs.StringVar(&c.server, "server", "", "server build (default: the newest Valkey build whose image is present)")
	fs.StringVar(&c.out, "out", "bench", "folder for results.md and results.json")
	fs.IntVar(&c.glideClients, "glide-clients", 16, "GLIDE clients closed together in each glide-close round")
	fs.StringVar(&c.glideWays, "glide-ways", "killed,restarted,none", "glide-close: comma-separated, what -runs rounds each do to the key's primary (killed, restarted, none)")
	fs.BoolVar(&c.glideDirect, "glide-direct", false, "glide-close: GLIDE dials the servers directly, not through the late-reply tap the card's runs use")
	fs.IntVar(&c.clients, "clients", 8, "clients of the throughput workload and of valkey-benchmark")
	fs.DurationVar(&c.tpDuration, "throughput-duration", 10*time.Second, "length of each throughput workload run")
	fs.IntVar(&c.benchN, "benchmark-requests", 200_000, "valkey-benchmark -n")
	fs.DurationVar(&c.memDuration, "memory-duration", 10*time.Minute, "length of the full-speed run whose peak memory is measured")
	fs.IntVar(&c.checkerKeys, "checker-keys", 10, "keys of the generated checker histories (5 clients per key)")
	fs.DurationVar(&c.porcTimeout, "porcupine-timeout", 60*time.Second, "porcupine alone gives up after this long")
	fs.IntVar(&c.porcMemMB, "porcupine-mem-mb", 4096, "porcupine alone is stopped when its process's RSS passes this many MiB")
	fs.DurationVar(&c.raceDuration, "race-duration", 60*time.Second, "longest kill-primary run when looking for a double holder")
	fs.StringVar(&c.child, "child", "", "internal: run one measurement in this process (porcupine, memory)")
	fs.IntVar(&c.ops, "child-ops", 0, "internal: operations of the porcupine child's history")
	fs.StringVar(&c.image, "child-image", "", "internal: image of the memory child's topology")
	fs.StringVar(&c.dir, "child-dir", "", "internal: run folder of the generate and recheck children")
	fs.IntVar(&c.checkOps, "check-ops", 10_000_000, "operations of the generated history lockcheck check is timed on end to end")
}

// apply turns -quick into its parameters; flags given on the command line
// win over them.
func (c *config) apply(set map[string]bool) {
	c.sizes = []int{10_000, 100_000, 1_000_000}
	if !c.quick {
		return
	}
	quick := []struct {
		flag string
		set  func()
	}{
		{"runs", func() { c.runs = 1 }},
		{"seeds", func() { c.seeds = 1 }},
		{"throughput-duration", func() { c.tpDuration = 3 * time.Second }},
		{"benchmark-requests", func() { c.benchN = 20_000 }},
		{"memory-duration", func() { c.memDuration = 10 * time.Second }},
		{"check-ops", func() { c.checkOps = 100_000 }},
		{"porcupine-timeout", func() { c.porcTimeout = 10 * time.Second }},
		// The kill waits until the lock key has expired on the replicas
		// (TTL 15 s), so a run shorter than about 40 s sees no kill.
		{"race-duration", func() { c.raceDuration = 45 * time.Second }},
	}
	for _, q := range quick {
		if !set[q.flag] {
			q.set()
		}
	}
	c.sizes = []int{1_000, 10_000, 100_000}
}

var sectionNames = []string{"startup", "failover", "throughput", "checker", "recheck", "race", "memory", "glide-close"}

// check rejects flags that make no sense.
func (c *config) check() error {
	if c.runs < 1 || c.seeds < 1 || c.clients < 1 || c.benchN < 1 || c.checkerKeys < 1 || c.checkOps < 1 {
		return fmt.Errorf("-runs, -seeds, -clients, -benchmark-requests and -checker-keys must be at least 1")
	}
	for _, w := range strings.Split(c.glideWays, ",") {
		if _, ok := glideWays[w]; !ok {
			return fmt.Errorf("-glide-ways %q: no way %q (have killed, restarted, none)", c.glideWays, w)
		}
	}
	if c.glideClients < 1 || c.glideClients > 200 {
		return fmt.Errorf("-glide-clients %d: give 1 to 200 (each is a GLIDE core with its own connections)", c.glideClients)
	}
	if c.tpDuration <= 0 || c.memDuration <= 0 || c.porcTimeout <= 0 || c.raceDuration <= 0 {
		return fmt.Errorf("durations must be positive")
	}
	if c.only != "" {
		for _, s := range strings.Split(c.only, ",") {
			if !slices.Contains(sectionNames, strings.TrimSpace(s)) {
				return fmt.Errorf("-only %q: no section %q (have %s)", c.only, s, strings.Join(sectionNames, ", "))
			}
		}
	}
	return nil
}

// needsServer says whether a section to run starts servers: the checker
// and recheck sections run on generated histories, without Docker.
func (c *config) needsServer() bool {
	for _, s := range sectionNames {
		if s != "checker" && s != "recheck" && c.wants(s) {
			return true
		}
	}
	return false
}

func (c *config) wants(section string) bool {
	if c.only == "" {
		// glide-close leaves a spinning core behind each Close that hung:
		// asked for by name only, so that no default run shares the
		// machine with them
		return section != "glide-close"
	}
	for _, s := range strings.Split(c.only, ",") {
		if strings.TrimSpace(s) == section {
			return true
		}
	}
	return false
}

func main() {
	fs := flag.NewFlagSet("bench", flag.ExitOnError)
	var cfg config
	cfg.register(fs)
	fs.Parse(os.Args[1:])
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	cfg.apply(set)
	if err := cfg.check(); err != nil {
		fmt.Fprintf(os.Stderr, "bench: %v\n", err)
		os.Exit(2)
	}
	who := "bench"
	if cfg.child != "" {
		who = "bench " + cfg.child
	}
	ctx, stop := interrupted(os.Stderr, who)
	defer stop()
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	var err error
	switch cfg.child {
	case "":
		err = run(ctx, cfg, log)
	case "porcupine":
		err = porcupineChild(ctx, cfg, os.Stdout)
	case "memory":
		err = memoryChild(ctx, cfg, log, os.Stdout)
	case "generate":
		err = generateChild(cfg)
	case "recheck":
		err = recheckChild(ctx, cfg, os.Stdout)
	default:
		err = fmt.Errorf("unknown -child %q", cfg.child)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "bench: %v\n", err)
		os.Exit(1)
	}
}

// interrupted is a context that ends on the first Ctrl-C or SIGTERM.
// Later signals are caught too, so that the cleanup that follows the first
// one is not cut short.
func interrupted(w io.Writer, who string) (context.Context, func()) {
	ctx, cancel := context.WithCancel(context.Background())
	sig := make(chan os.Signal, 4)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	go func() {
		n := 0
		for range sig {
			if n == 0 {
				fmt.Fprintf(w, "%s: interrupted: removing what it started, please wait\n", who)
				cancel()
			} else {
				fmt.Fprintf(w, "%s: still cleaning up\n", who)
			}
			n++
		}
	}()
	return ctx, func() { signal.Stop(sig); cancel() }
}
