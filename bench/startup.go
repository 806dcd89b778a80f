package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"os/exec"
	"strings"
	"sync"
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
		for _, n := range floorSizes() {
			d, err := b.dockerRunFloor(ctx, i, n)
			if err != nil {
				b.removeFloor(ctx)
				errs = append(errs, fmt.Errorf("docker run floor of %d: %w", n, err))
				continue
			}
			b.removeFloor(ctx)
			b.floor[n] = append(b.floor[n], ms(d))
			b.log.Info("docker run floor", "run", i+1, "containers", n, "ms", d.Milliseconds())
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

// nodeCount is how many containers each kind starts.
var nodeCount = map[topology.Kind]int{topology.Standalone: 1, topology.Replicated: 3, topology.Sentinel: 6, topology.Cluster: 6}

// floorSizes are the container counts whose floor is measured.
func floorSizes() []int { return []int{1, 3, 6} }

// startupRows writes one row per kind from whatever start-ups were timed,
// each against the floor for its number of containers.
func (b *bench) startupRows() {
	for _, k := range topology.Kinds() {
		xs := b.startup[k]
		n := nodeCount[k]
		r := Row{Name: fmt.Sprintf("start-up, %s (topology.Start to healthy)", k), Unit: "ms", Runs: len(xs), section: secStartup,
			Reference:      fmt.Sprintf("%d bare docker run -d of the same image at once, until each answers PING (floor)", n),
			ReferenceValue: num(median(b.floor[n])), Value: num(median(xs))}
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
		if len(b.floor[n]) > 0 {
			notes = append(notes, "floor "+fmtValues(b.floor[n], "ms"))
		}
		r.Note = strings.Join(notes, "; ")
		b.add(r.withRatio())
	}
}

// dockerRunFloor runs the image's server in n bare containers at once
// with the docker CLI, as a user would, and times them until each answers
// PING on its mapped port: the floor for a topology of n nodes. The
// containers carry lockcheck's labels and are removed before it returns
// (and by the run's final cleanup if that fails).
func (b *bench) dockerRunFloor(ctx context.Context, run, n int) (time.Duration, error) {
	begin := time.Now()
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			errs[i] = b.bareContainer(ctx, fmt.Sprintf("lockcheck-%s-floor%d-%dof%d", b.runID, run, i, n), begin)
		})
	}
	wg.Wait()
	return time.Since(begin), errors.Join(errs...)
}

// bareContainer starts one bare container and waits until it answers
// PING; it removes the container when the floor's clock has stopped.
func (b *bench) bareContainer(ctx context.Context, name string, begin time.Time) error {
	port, err := freePort()
	if err != nil {
		return err
	}
	args := []string{"run", "-d", "--name", name,
		"--label", topology.LabelManaged + "=true", "--label", topology.LabelRun + "=" + b.runID,
		"-p", fmt.Sprintf("127.0.0.1:%d:%d", port, topology.ServerPort),
		"--entrypoint", b.build.Binary(), b.image,
		"--port", fmt.Sprint(topology.ServerPort), "--bind", "0.0.0.0", "--protected-mode", "no", "--save", ""}
	if out, err := exec.CommandContext(ctx, "docker", args...).CombinedOutput(); err != nil {
		return fmt.Errorf("docker run: %v: %s", err, strings.TrimSpace(string(out)))
	}
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	deadline := begin.Add(60 * time.Second)
	for ping(addr) != nil {
		if time.Now().After(deadline) {
			return fmt.Errorf("%s did not answer PING within 60 s", name)
		}
		if err := sleepCtx(ctx, 5*time.Millisecond); err != nil {
			return err
		}
	}
	return nil
}

// removeFloor removes the floor's containers of one run.
func (b *bench) removeFloor(ctx context.Context) {
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	ids, err := exec.CommandContext(cctx, "docker", "ps", "-aq", "--filter", "label="+topology.LabelRun+"="+b.runID).Output()
	if err != nil || len(strings.Fields(string(ids))) == 0 {
		return
	}
	exec.CommandContext(cctx, "docker", append([]string{"rm", "-f", "-v"}, strings.Fields(string(ids))...)...).Run()
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
