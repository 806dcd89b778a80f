package lockclient

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/lockcheck/lockcheck/history"
	"github.com/lockcheck/lockcheck/topology"
)

// external is a lock client in another process that speaks the adapter
// protocol of DESIGN.md (JSON lines, one request then one reply). One
// process serves one logical client. A process that does not answer in
// time, or dies, makes that call Unknown and is replaced before the next.
type external struct {
	argv   []string
	cfg    Config
	name   string
	stderr *os.File

	mu       sync.Mutex
	proc     *adapterProc
	restarts atomic.Int64
	// tap carries the adapter's connections, so that a pause stops it
	// right after its first command reached a data node; addrs and
	// addrMap are the tap's addresses the adapter is given. Without
	// addresses (an adapter tested alone) there is no tap and a pause
	// stops it after Pause.After.
	tap     *tap
	addrs   []string
	addrMap map[string]string
}

// initRequest is the first message. addr_map and timeout_ms are additions
// to protocol version 1 that older adapters ignore: addr_map translates the
// container addresses that Sentinel and cluster nodes announce into host
// addresses, and timeout_ms is the harness's per-call budget.
type initRequest struct {
	Op        string            `json:"op"`
	V         int               `json:"v"`
	Topology  string            `json:"topology"`
	Addrs     []string          `json:"addrs"`
	MasterSet string            `json:"master_set,omitempty"`
	Client    int               `json:"client"`
	AddrMap   map[string]string `json:"addr_map,omitempty"`
	TimeoutMS int64             `json:"timeout_ms,omitempty"`
}

type opRequest struct {
	Op    string `json:"op"`
	Key   string `json:"key,omitempty"`
	Token string `json:"token,omitempty"`
	TTLms int64  `json:"ttl_ms,omitempty"`
}

type adapterReply struct {
	Status string `json:"status"`
	Token  string `json:"token"`
	Fence  *int64 `json:"fence"`
	Error  string `json:"error"`
	Name   string `json:"name"`
}

// initDeadline allows for an interpreter's start and imports.
const initDeadline = 15 * time.Second

func newExternal(cmd string, cfg Config) (*external, error) {
	argv := strings.Fields(cmd)
	if len(argv) == 0 {
		return nil, errors.New("client external: no command after \"external:\"")
	}
	dir := cfg.StderrDir
	if dir == "" {
		var err error
		if dir, err = os.MkdirTemp("", "lockcheck-external-"); err != nil {
			return nil, fmt.Errorf("client external: stderr folder: %w", err)
		}
	}
	path := filepath.Join(dir, fmt.Sprintf("external-%d.stderr", cfg.ID))
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("client external: stderr file: %w", err)
	}
	e := &external{argv: argv, cfg: cfg, stderr: f, addrs: cfg.Addrs, addrMap: cfg.AddrMap}
	if len(cfg.Addrs) > 0 {
		if e.tap, e.addrs, e.addrMap, err = newTap(cfg.Addrs, cfg.AddrMap, cfg.Topology == topology.Sentinel); err != nil {
			f.Close()
			return nil, fmt.Errorf("client external:%s: tap: %w", cmd, err)
		}
	}
	if err := e.start(); err != nil {
		f.Close()
		if e.tap != nil {
			e.tap.close()
		}
		return nil, fmt.Errorf("client external:%s: %w (stderr in %s)", cmd, err, path)
	}
	return e, nil
}

// Name is the name the adapter gave in its init reply.
func (e *external) Name() string { return ExternalPrefix + e.name }

// StderrPath is the file that keeps the adapter's stderr.
func (e *external) StderrPath() string { return e.stderr.Name() }

// Counts reports how often the adapter process was replaced.
func (e *external) Counts() map[string]int64 {
	return map[string]int64{"adapter_restarts": e.restarts.Load()}
}

func (e *external) start() error {
	p, err := startAdapter(e.argv, e.stderr)
	if err != nil {
		return err
	}
	req := initRequest{Op: "init", V: 1, Topology: string(e.cfg.Topology), Addrs: e.addrs,
		MasterSet: e.cfg.MasterSet, Client: e.cfg.ID, AddrMap: e.addrMap, TimeoutMS: e.cfg.Timeout.Milliseconds()}
	rep, err := p.roundTrip(context.Background(), req, initDeadline, nil, nil)
	if err == nil && rep.Status != "ok" {
		err = fmt.Errorf("init: adapter replied %s: %s", rep.Status, rep.Error)
	}
	if err != nil {
		p.kill()
		return err
	}
	e.name = rep.Name
	if e.name == "" {
		e.name = strings.Join(e.argv, " ")
	}
	e.proc = p
	return nil
}

func (e *external) Acquire(ctx context.Context, key string, ttl time.Duration) Result {
	return e.call(ctx, opRequest{Op: "acquire", Key: key, TTLms: ttl.Milliseconds()})
}

func (e *external) Extend(ctx context.Context, key, token string, ttl time.Duration) Result {
	return e.call(ctx, opRequest{Op: "extend", Key: key, Token: token, TTLms: ttl.Milliseconds()})
}

func (e *external) Release(ctx context.Context, key, token string) Result {
	return e.call(ctx, opRequest{Op: "release", Key: key, Token: token})
}

func (e *external) call(ctx context.Context, req opRequest) Result {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.proc == nil {
		if err := e.start(); err != nil {
			return unknownResult("adapter restart: " + err.Error())
		}
	}
	pause, _ := ctx.Value(pauseKey{}).(*Pause)
	deadline := e.cfg.Timeout + e.cfg.AdapterGrace
	if h := holdOf(ctx); h != nil && e.tap != nil {
		deadline += h.For
		e.tap.hold(h)
		defer e.tap.disarm()
	}
	rep, err := e.proc.roundTrip(ctx, req, deadline, pause, e.tap)
	if err != nil {
		e.replace(err)
		return unknownResult(err.Error())
	}
	switch rep.Status {
	case "ok":
		r := Result{Outcome: history.OK, Token: rep.Token}
		if rep.Fence != nil {
			r.Fence, r.HasFence = *rep.Fence, true
		}
		return r
	case "fail":
		return Result{Outcome: history.Fail, Token: rep.Token, Err: rep.Error}
	case "unknown":
		return Result{Outcome: history.Unknown, Token: rep.Token, Err: rep.Error}
	}
	return unknownResult(fmt.Sprintf("adapter replied status %q: %s", rep.Status, rep.Error))
}

// replace ends a process that failed a call; the next call starts another.
func (e *external) replace(why error) {
	e.cfg.Log.Warn("external adapter replaced", "client", e.cfg.ID, "adapter", e.name, "reason", why)
	fmt.Fprintf(e.stderr, "--- lockcheck: adapter replaced: %v\n", why)
	e.proc.kill()
	e.proc = nil
	e.restarts.Add(1)
}

// Close asks the adapter to close, then ends it if it lingers.
func (e *external) Close() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.proc != nil {
		e.proc.roundTrip(context.Background(), opRequest{Op: "close"}, time.Second, nil, nil)
		e.proc.in.Close()
		e.proc.waitOrKill(2 * time.Second)
		e.proc = nil
	}
	if e.tap != nil {
		e.tap.close()
	}
	return e.stderr.Close()
}

// adapterProc is one running adapter process.
type adapterProc struct {
	cmd    *exec.Cmd
	in     io.WriteCloser
	lines  chan string
	exited chan struct{}
	// dead tells the reader that nobody waits for lines any more.
	dead     chan struct{}
	deadOnce sync.Once
	err      error // why the reader stopped; read after lines is closed
}

// startAdapter runs argv in its own process group, so that killing it also
// ends whatever it started.
func startAdapter(argv []string, stderr *os.File) (*adapterProc, error) {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stderr = stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, fmt.Errorf("adapter stdin: %w", err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("adapter stdout: %w", err)
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start adapter: %w", err)
	}
	p := &adapterProc{cmd: cmd, in: in, lines: make(chan string), exited: make(chan struct{}), dead: make(chan struct{})}
	// Wait closes stdout, so it runs only after the reader saw EOF.
	go func() { p.read(out); cmd.Wait(); close(p.exited) }()
	return p, nil
}

func (p *adapterProc) read(out io.Reader) {
	sc := bufio.NewScanner(out)
	sc.Buffer(make([]byte, 64*1024), 4<<20)
	for sc.Scan() {
		select {
		case p.lines <- sc.Text():
		case <-p.dead:
			// Drain so that the process never blocks on a full pipe.
			io.Copy(io.Discard, out)
			p.err = errors.New("adapter ended by lockcheck")
			close(p.lines)
			return
		}
	}
	p.err = sc.Err()
	if p.err == nil {
		p.err = io.EOF
	}
	close(p.lines)
}

// roundTrip sends one request and waits up to deadline for its reply.
// With a pause, the process is stopped (SIGSTOP) right after its first
// command of the request reached a data node (through tp), or without a
// tap pause.After after the request went out, if it has not answered by
// then, and continued pause.For later: frozen at whatever point of the
// operation it had reached, as a GC pause would freeze it. The deadline
// grows by the pause.
func (p *adapterProc) roundTrip(ctx context.Context, req any, deadline time.Duration, pause *Pause, tp *tap) (adapterReply, error) {
	var rep adapterReply
	b, err := json.Marshal(req)
	if err != nil {
		return rep, fmt.Errorf("encode request: %w", err)
	}
	var stop <-chan time.Time
	if pause != nil {
		deadline += pause.For
	}
	if pause != nil && tp != nil {
		tp.arm(func(stopped func()) {
			if pause.taken.CompareAndSwap(false, true) {
				p.freeze(pause.For, stopped)
			}
		})
		defer tp.disarm()
	}
	if _, err := p.in.Write(append(b, '\n')); err != nil {
		return rep, fmt.Errorf("write to adapter: %w", err)
	}
	if pause != nil && tp == nil {
		t := time.NewTimer(pause.After)
		defer t.Stop()
		stop = t.C
	}
	timer := time.NewTimer(deadline)
	defer timer.Stop()
	for {
		select {
		case line, ok := <-p.lines:
			if !ok {
				return rep, fmt.Errorf("adapter closed its output: %v", p.err)
			}
			if err := json.Unmarshal([]byte(line), &rep); err != nil {
				return rep, fmt.Errorf("adapter replied %q: %w", line, err)
			}
			return rep, nil
		case <-stop:
			stop = nil
			if pause.taken.CompareAndSwap(false, true) {
				p.freeze(pause.For, func() {})
			}
		case <-timer.C:
			return rep, fmt.Errorf("adapter did not answer within %v", deadline)
		case <-ctx.Done():
			return rep, fmt.Errorf("call abandoned: %w", ctx.Err())
		}
	}
}

// freeze stops the adapter's process group for d, then continues it;
// stopped is told once the stop is sent.
func (p *adapterProc) freeze(d time.Duration, stopped func()) {
	syscall.Kill(-p.cmd.Process.Pid, syscall.SIGSTOP)
	stopped()
	time.Sleep(d)
	syscall.Kill(-p.cmd.Process.Pid, syscall.SIGCONT)
}

func (p *adapterProc) kill() {
	p.deadOnce.Do(func() { close(p.dead) })
	syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
	<-p.exited
}

func (p *adapterProc) waitOrKill(d time.Duration) {
	select {
	case <-p.exited:
	case <-time.After(d):
		p.kill()
	}
}
