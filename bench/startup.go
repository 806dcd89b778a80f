package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"os/exec"
	"strings"
	"time"

	"github.com/lockcheck/lockcheck/topology"
)

// startupSection times topology.Start to healthy for standalone and
// replicated, and the floor: a bare docker run of the same image until its
// server answers PING. Sentinel and cluster start-ups are timed by the
// failover section, which starts those topologies anyway. Runs interleave
// so that a change of load on the machine touches every kind alike.
func (b *bench) startupSection(ctx context.Context) error {
	var errs []error
	for i := range b.cfg.runs {
		if ctx.Err() != nil {
			break
		}
		d, err := b.dockerRunFloor(ctx, i)
		if err != nil {
			errs = append(errs, fmt.Errorf("docker run floor: %w", err))
		} else {
			b.floor = append(b.floor, ms(d))
			b.log.Info("docker run floor", "run", i+1, "ms", d.Milliseconds())
		}
		kinds := []topology.Kind{topology.Standalone, topology.Replicated}
		if !b.cfg.wants("failover") {
			kinds = topology.Kinds()
		}
		for _, k := range kinds {
			t, err := b.start(ctx, k)
			if err != nil {
				errs = append(errs, err)
				b.startErr[k] = err.Error()
				continue
			}
			b.startup[k] = append(b.startup[k], ms(t.Startup))
			b.stop(ctx, t)
		}
	}
	return errors.Join(errs...)
}

// startupRows writes one row per kind from whatever start-ups were timed.
func (b *bench) startupRows() {
	floor := median(b.floor)
	for _, k := range topology.Kinds() {
		xs := b.startup[k]
		r := Row{Name: fmt.Sprintf("start-up, %s (topology.Start to healthy)", k), Unit: "ms", Runs: len(xs), section: secStartup,
			Reference: "bare docker run -d of the same image until PING answers (floor)", ReferenceValue: num(floor),
			Value: num(median(xs))}
		var notes []string
		if len(xs) > 0 {
			notes = append(notes, fmtValues(xs, "ms"))
		} else {
			notes = append(notes, "not measured: "+orDefault(b.startErr[k], "its section did not run"))
		}
		if (k == topology.Sentinel || k == topology.Cluster) && b.cfg.wants("failover") {
			notes = append(notes, "timed on the topologies the failover row starts")
		}
		nodes := map[topology.Kind]string{topology.Standalone: "1 server", topology.Replicated: "3 servers",
			topology.Sentinel: "3 servers + 3 sentinels", topology.Cluster: "6 servers"}[k]
		notes = append(notes, nodes+", network, clock shim and health checks included")
		if len(b.floor) > 0 {
			notes = append(notes, "floor "+fmtValues(b.floor, "ms"))
		}
		r.Note = strings.Join(notes, "; ")
		b.add(r.withRatio())
	}
}

// dockerRunFloor runs the image's server in a bare container with the
// docker CLI, as a user would, and times it until PING answers on its
// mapped port. The container carries lockcheck's labels and is removed
// before it returns (and by the run's final cleanup if that fails).
func (b *bench) dockerRunFloor(ctx context.Context, i int) (time.Duration, error) {
	port, err := freePort()
	if err != nil {
		return 0, err
	}
	name := fmt.Sprintf("lockcheck-%s-floor%d", b.runID, i)
	args := []string{"run", "-d", "--name", name,
		"--label", topology.LabelManaged + "=true", "--label", topology.LabelRun + "=" + b.runID,
		"-p", fmt.Sprintf("127.0.0.1:%d:%d", port, topology.ServerPort),
		"--entrypoint", b.build.Binary(), b.image,
		"--port", fmt.Sprint(topology.ServerPort), "--bind", "0.0.0.0", "--protected-mode", "no", "--save", ""}
	defer func() {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer cancel()
		exec.CommandContext(cctx, "docker", "rm", "-f", "-v", name).Run()
	}()
	begin := time.Now()
	if out, err := exec.CommandContext(ctx, "docker", args...).CombinedOutput(); err != nil {
		return 0, fmt.Errorf("docker run: %v: %s", err, strings.TrimSpace(string(out)))
	}
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	deadline := begin.Add(60 * time.Second)
	for {
		if ping(addr) == nil {
			return time.Since(begin), nil
		}
		if time.Now().After(deadline) {
			return 0, fmt.Errorf("%s did not answer PING within 60 s", name)
		}
		if err := sleepCtx(ctx, 5*time.Millisecond); err != nil {
			return 0, err
		}
	}
}

// ping dials addr and sends PING in the inline protocol. docker-proxy
// accepts connections before the server listens, so only a +PONG counts.
func ping(addr string) error {
	c, err := net.DialTimeout("tcp", addr, 500*time.Millisecond)
	if err != nil {
		return err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(500 * time.Millisecond))
	if _, err := c.Write([]byte("PING\r\n")); err != nil {
		return err
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		return err
	}
	if !strings.HasPrefix(line, "+PONG") {
		return fmt.Errorf("PING answered %q", strings.TrimSpace(line))
	}
	return nil
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("find a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
