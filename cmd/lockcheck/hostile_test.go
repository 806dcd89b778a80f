package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Hostile input gets the answer bad input gets, in the budget a check
// before anything is spent has: each case runs the built binary with no
// Docker engine reachable, and must exit 2 with one line on stderr that
// says what is wrong, without a panic, within hostileTime of CPU and
// hostileMemory at its peak, and write nothing into the folder of its
// input. The time is the child's CPU time, not the wall clock's, which on
// a loaded machine measures the machine; a hang (a FIFO read) is caught
// by hostileHang.
const (
	hostileTime   = time.Second
	hostileHang   = 5 * time.Second
	hostileMemory = 100 << 10 // KiB, as Maxrss counts on Linux
)

// TestHostileInput is the table of hostile inputs.
func TestHostileInput(t *testing.T) {
	bin := lockcheckBinary(t)
	fx := hostileFixtures(t)
	cases := []struct {
		name  string
		args  []string
		want  string
		watch string // the input's folder: nothing may be written there
	}{
		{"a billion keys", []string{"run", "--server", "valkey-9.1", "--keys", "1000000000"}, "want 1 to 10000", ""},
		{"a hundred million clients", []string{"run", "--server", "valkey-9.1", "--clients", "100000000"}, "want 1 to 1000", ""},
		{"claims for a mistyped client", []string{"claims", "--table", "migrations", "--clients", "valkeylok"}, `--clients "valkeylok": no claim of the table runs it`, ""},
		{"no lease", []string{"run", "--server", "valkey-9.1", "--ttl", "0"}, "--ttl 0s: want a duration above 0", ""},
		{"no redlock nodes", []string{"run", "--server", "valkey-9.1", "--topology", "redlock", "--client", "redlock", "--nodes", "0"}, "--nodes 0: want a number above 0", ""},
		{"an adapter without a command", []string{"run", "--server", "valkey-9.1", "--client", "external:"}, "names no adapter command", ""},
		{"a negative call timeout", []string{"run", "--server", "valkey-9.1", "--call-timeout", "-1s"}, "--call-timeout -1s", ""},
		{"run --out a file", []string{"run", "--server", "valkey-9.1", "--out", fx.file}, "is a file, not a folder", fx.root},
		{"run --out a run's folder", []string{"run", "--server", "valkey-9.1", "--out", fx.run}, "holds a run (scenario.json)", fx.run},
		{"run --out a symlink loop", []string{"run", "--server", "valkey-9.1", "--out", fx.loop}, "loop of symbolic links", fx.root},
		{"replay --out a run's folder", []string{"replay", "--out", fx.run, fx.run}, "holds a run", fx.run},
		{"check a negative timeout", []string{"check", "--timeout", "-1s", fx.run}, "--timeout -1s: want a duration of 0 or more (0: the default", fx.run},
		{"check a negative tolerance", []string{"check", "--tolerance", "-1h", fx.run}, "--tolerance -1h0m0s", fx.run},
		{"import a negative lease", []string{"import", "jepsen", "--ttl", "-1s", fx.edn, fx.newOut}, "--ttl -1s: want a lease above 0", fx.root},
		{"import into a run's folder", []string{"import", "jepsen", "--ttl", "1s", fx.edn, fx.run}, "holds a run", fx.run},
		{"import junk", []string{"import", "jepsen", "--ttl", "1s", fx.junkEDN, fx.newOut}, ":1:1: a symbol, keyword or number longer than", fx.root},
		{"import a 1 GB line", []string{"import", "jepsen", "--ttl", "1s", fx.hugeEDN, fx.newOut}, "more than 1 MiB for one value", fx.root},
		{"import a symlink loop", []string{"import", "jepsen", "--ttl", "1s", fx.loop, fx.newOut}, "loop of symbolic links", fx.root},
		{"import a FIFO", []string{"import", "jepsen", "--ttl", "1s", fx.fifo, fx.newOut}, "is a FIFO, not a regular file: give a file", fx.root},
		{"shrink a missing folder", []string{"shrink", filepath.Join(fx.root, "missing")}, "in/missing does not exist: give the folder of a violated run", fx.root},
		{"shrink a garbage folder", []string{"shrink", fx.garbage}, "scenario.json: line 1, column 1: want a value", fx.garbage},
		{"replay an unknown server", []string{"replay", fx.unknownServer}, `unknown server build "valkey-77"`, fx.unknownServer},
		{"replay garbage", []string{"replay", fx.garbage}, "scenario.json: line 1, column 1: want a value", fx.garbage},
		{"replay a mistyped field", []string{"replay", fx.mistyped}, "scenario.json: line 5, column 16: scenario.clients: want a whole number (int), got a string", fx.mistyped},
		{"replay a newer format", []string{"replay", fx.newer}, "has format 99; this lockcheck reads up to 1: use a newer lockcheck", fx.newer},
		{"replay a garbage script", []string{"replay", fx.trace}, "trace.json: line 2, column 3: want a member name in quotes", fx.trace},
		{"replay a symlink loop", []string{"replay", fx.loop}, "loop is a loop of symbolic links: give a folder", fx.root},
		{"shrink a file", []string{"shrink", fx.file}, "afile is a file, not a folder", fx.root},
		{"claims over an earlier measurement", []string{"claims", "--table", "report-card", "--shard", "2/8", "--into=", "--out", fx.card}, "holds an earlier measurement (report-card.json): give another --out, or --force to measure again over it, or --resume to go on with it", fx.card},
		{"claims resuming another shard", []string{"claims", "--table", "report-card", "--shard", "1/8", "--into=", "--resume", "--out", fx.card}, "resume it with the same --table, --runs, --server and --shard", fx.card},
		{"claims resuming another plan's run", []string{"claims", "--table", "report-card", "--shard", "2/8", "--into=", "--resume", "--clients", "redsync", "--out", fx.card}, "which is not an item of 2/8 of this plan", fx.card},
		{"claims resuming nothing", []string{"claims", "--table", "report-card", "--shard", "2/8", "--into=", "--resume", "--out", fx.newOut}, "holds no report-card.json to go on with", fx.root},
		{"claims resuming with force", []string{"claims", "--table", "report-card", "--resume", "--force", "--out", fx.card}, "--resume and --force: choose one", fx.card},
		{"false-alarms over an earlier measurement", []string{"false-alarms", "--out", fx.alarms}, "holds an earlier measurement (false-alarms.json): give another --out, or --force to measure again over it, or --resume to go on with it", fx.alarms},
		{"false-alarms resuming other seeds", []string{"false-alarms", "--resume", "--out", fx.alarms}, "holds false alarms of 0 seeds of 0s, the whole plan: resume it with the same --runs, --duration and --shard", fx.alarms},
		{"catch-rate resuming nothing", []string{"catch-rate", "--gate", "--resume", "--out", fx.newOut}, "holds no catch-rate.json to go on with", fx.root},
		{"shrink-figures of a missing folder", []string{"shrink-figures", "--out", fx.newOut, fx.run, filepath.Join(fx.root, "missing")}, "in/missing does not exist: give the folder of a violated run", fx.root},
		{"shrink-figures of a garbage folder", []string{"shrink-figures", "--out", fx.newOut, fx.garbage}, "scenario.json: line 1, column 1: want a value", fx.garbage},
		{"shrink-figures of a file", []string{"shrink-figures", "--out", fx.newOut, fx.file}, "afile is a file, not a folder", fx.root},
		{"replay a folder of many files", []string{"replay", fx.many}, "scenario.json does not exist", fx.many},
		{"check a folder of many files", []string{"check", fx.many}, "has no history.json and no ops.jsonl", fx.many},
		{"check a garbage stream", []string{"check", fx.stream}, "ops.jsonl: line 2, column 19: op.client: want a whole number (int), got a string", fx.stream},
		{"check a 1 GB stream line", []string{"check", fx.hugeStream}, "ops.jsonl: line 1, column 15: want a string's character, got control byte 0x00", fx.hugeStream},
		{"check a 1 GB history", []string{"check", fx.hugeHistory}, "history.json: line 1, column 1 (byte 0): want the history's object", filepath.Dir(fx.hugeHistory)},
		{"check a 1 GB scenario", []string{"check", fx.hugeScenario}, "scenario.json is 1024 MiB", fx.hugeScenario},
		{"check a symlink loop", []string{"check", fx.loop}, "loop of symbolic links", fx.root},
		{"check a FIFO", []string{"check", fx.fifo}, "is not a regular file or a folder", fx.root},
		{"check a FIFO history", []string{"check", fx.fifoRun}, "history.json is a FIFO, not a regular file: give a file", fx.fifoRun},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before := snapshot(t, c.watch)
			res := runHostile(t, bin, c.args)
			line := strings.TrimSuffix(res.stderr, "\n")
			switch {
			case res.code != usageExit:
				t.Errorf("exit %d, want %d; stderr %q", res.code, usageExit, res.stderr)
			case strings.Contains(res.stderr, "panic") || strings.Contains(res.stderr, "goroutine "):
				t.Errorf("panicked:\n%s", res.stderr)
			case line == "" || strings.Contains(line, "\n") || !strings.HasSuffix(res.stderr, "\n"):
				t.Errorf("stderr is not exactly one line:\n%s", res.stderr)
			case !strings.HasPrefix(line, "lockcheck: ") || !strings.Contains(line, c.want):
				t.Errorf("stderr %q lacks %q", line, c.want)
			}
			if res.cpu > hostileTime || res.wall > hostileHang {
				t.Errorf("took %s of CPU in %s, want under %s", res.cpu.Round(time.Millisecond), res.wall.Round(time.Millisecond), hostileTime)
			}
			if res.maxRSS > hostileMemory {
				t.Errorf("peak memory %d MiB, want under %d MiB", res.maxRSS>>10, hostileMemory>>10)
			}
			if after := snapshot(t, c.watch); after != before {
				t.Errorf("wrote into %s:\nbefore:\n%s\nafter:\n%s", c.watch, before, after)
			}
			t.Logf("%s CPU, %s wall, %d MiB: %s", res.cpu.Round(time.Millisecond), res.wall.Round(time.Millisecond), res.maxRSS>>10, line)
		})
	}
}

// hostileResult is what one run of the binary did.
type hostileResult struct {
	code   int
	stderr string
	wall   time.Duration
	cpu    time.Duration // user and system
	maxRSS int64         // KiB
}

// runHostile runs the binary with args and no reachable engine; a run
// that hangs is killed after twice hostileHang and fails the test.
func runHostile(t *testing.T, bin string, args []string) hostileResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*hostileHang)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = append(os.Environ(), "DOCKER_HOST=unix:///nonexistent/docker.sock", "LOCKCHECK_REGISTRY=")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	start := time.Now()
	err := cmd.Run()
	wall := time.Since(start)
	if ctx.Err() != nil {
		t.Fatalf("lockcheck %s hung: killed after %s", strings.Join(args, " "), wall.Round(time.Millisecond))
	}
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatal(err)
	}
	res := hostileResult{code: cmd.ProcessState.ExitCode(), stderr: stderr.String(), wall: wall,
		cpu: cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()}
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		res.maxRSS = ru.Maxrss
	}
	return res
}

var (
	binOnce sync.Once
	binPath string
	binErr  error
	binDir  string
)

// lockcheckBinary builds the command once for the package's tests.
func lockcheckBinary(t *testing.T) string {
	t.Helper()
	binOnce.Do(func() {
		if binDir, binErr = os.MkdirTemp("", "lockcheck-bin-"); binErr != nil {
			return
		}
		binPath = filepath.Join(binDir, "lockcheck")
		out, err := exec.Command("go", "build", "-o", binPath, ".").CombinedOutput()
		if err != nil {
			binErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if binErr != nil {
		t.Fatal(binErr)
	}
	return binPath
}

func TestMain(m *testing.M) {
	code := m.Run()
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}

// fixtures are the hostile inputs, made once: each file or folder a
// case reads.
type fixtures struct {
	root, file, loop, fifo, newOut                      string
	run, garbage, mistyped, newer, unknownServer, trace string
	many, stream, hugeStream, hugeScenario, fifoRun     string
	edn, junkEDN, hugeEDN, hugeHistory                  string
	card, alarms                                        string
}

// hugeSize is the size of the 1 GB inputs: sparse files, made at once,
// that read as a line of NUL bytes after their start.
const hugeSize = 1 << 30

func hostileFixtures(t *testing.T) fixtures {
	t.Helper()
	// the loose inputs are in a folder of their own, which the cases
	// that read them watch; each folder input is a folder of its own
	top := t.TempDir()
	root := filepath.Join(top, "in")
	p := func(parts ...string) string { return filepath.Join(append([]string{top}, parts...)...) }
	in := func(name string) string { return filepath.Join(root, name) }
	write := func(path, text string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	sparse := func(path, start string) {
		t.Helper()
		write(path, start)
		if err := os.Truncate(path, hugeSize); err != nil {
			t.Fatal(err)
		}
	}
	scenario := func(server string) string {
		return fmt.Sprintf(`{"format": 1, "scenario": {"server": %q, "topology": "standalone", "client": "native", "seed": 1, "clients": 2, "keys": 1}, "schedule": null}`, server)
	}
	fx := fixtures{root: root, file: in("afile"), loop: in("loop"), fifo: in("fifo"), newOut: p("new-out"),
		run: p("run"), garbage: p("garbage"), mistyped: p("mistyped"), newer: p("newer"), unknownServer: p("unknown-server"),
		trace: p("trace"), many: p("many"), stream: p("stream"), hugeStream: p("huge-stream"), hugeScenario: p("huge-scenario"),
		fifoRun: p("fifo-run"), edn: in("history.edn"), junkEDN: in("junk.edn"), hugeEDN: in("huge.edn"), hugeHistory: p("huge", "history.json")}
	write(fx.file, "not a folder\n")
	fx.card, fx.alarms = p("card"), p("alarms")
	// a report card's shard 2 of 8 stopped after one run: glide's, on
	// the cluster with no fault, seed 2
	write(p("card", "report-card.json"), `{"table": "report-card", "server": "valkey-9.1", "runs": 20, "shard": 2, "shards": 8,
		"rows": [{"claim": "cluster/none", "client": "glide", "runs_detail": [{"claim": "cluster/none", "client": "glide", "seed": 2}]}]}`)
	write(p("alarms", "false-alarms.json"), "{}\n")
	if err := os.Symlink("loop", fx.loop); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(fx.fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	write(p("run", "scenario.json"), scenario("valkey-9.1"))
	write(p("run", "history.json"), `{"format": 2, "ops": []}`)
	write(p("garbage", "scenario.json"), "garbage\n")
	write(p("mistyped", "scenario.json"), "{\n  \"format\": 1,\n  \"scenario\": {\n    \"server\": \"valkey-9.1\",\n    \"clients\": \"six\"\n  }\n}\n")
	write(p("newer", "scenario.json"), `{"format": 99, "scenario": {"server": 9, "clients": "many"}, "what": ["next"]}`)
	write(p("unknown-server", "scenario.json"), scenario("valkey-77"))
	write(p("trace", "trace.json"), "{\n  format: 1\n}\n")
	for i := range 20000 {
		write(p("many", fmt.Sprintf("f%05d", i)), "")
	}
	write(p("stream", "ops.jsonl"), `{"meta": {"server": "valkey-9.1"}}`+"\n"+`{"op": {"client": "one", "key": "k"}}`+"\n")
	sparse(p("huge-stream", "ops.jsonl"), `{"op":{"key":"`)
	sparse(p("huge-scenario", "scenario.json"), `{"format": 1, "scenario": {"server": "`)
	sparse(fx.hugeHistory, "")
	if err := os.MkdirAll(fx.fifoRun, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(p("fifo-run", "history.json"), 0o644); err != nil {
		t.Fatal(err)
	}
	write(fx.edn, "{:type :invoke, :f :acquire, :process 0, :time 1}\n{:type :ok, :f :acquire, :process 0, :time 2}\n")
	write(fx.junkEDN, strings.Repeat("junk", 1<<20))
	sparse(fx.hugeEDN, `{:type :invoke, :f :acquire, :process 0, :time 1, :error "`)
	return fx
}

// snapshot lists what dir holds (names, sizes, modification times); ""
// for no folder.
func snapshot(t *testing.T, dir string) string {
	t.Helper()
	if dir == "" {
		return ""
	}
	var b strings.Builder
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		fmt.Fprintf(&b, "%s %d %s %d\n", path, fi.Size(), fi.Mode(), fi.ModTime().UnixNano())
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}
