package topology

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/moby/moby/client"
)

// RemoveRun removes the containers and networks labelled with a run id
// (every run when runID is ""), whatever state they are in.
//
// The engine can refuse a removal for a moment: with fuse-overlayfs a
// container whose file system was just mounted for a copy (a restart that
// wipes its data) may answer "device or resource busy", a force removal
// can be "already in progress", and a network keeps an endpoint until its
// last container is gone. So RemoveRun goes in rounds: each lists what is
// left and removes it, until nothing is left or removeRounds rounds have
// failed; its error names what was still there and the last refusal.
func (e *Engine) RemoveRun(ctx context.Context, runID string) error {
	label := LabelManaged + "=true"
	if runID != "" {
		label = LabelRun + "=" + runID
	}
	f := client.Filters{}.Add("label", label)
	var err error
	for round := 1; ; round++ {
		if err = e.removeOnce(ctx, f); err == nil {
			return nil
		}
		if round == removeRounds || ctx.Err() != nil {
			return err
		}
		e.log.Warn("removal refused, trying again", "run", runID, "round", round, "err", err)
		select {
		case <-ctx.Done():
			return errors.Join(err, ctx.Err())
		case <-time.After(time.Duration(round) * 200 * time.Millisecond):
		}
	}
}

// removeRounds bounds RemoveRun's rounds: 3 s of pauses in all (0.2 s
// after the first round, 0.4 s after the second, and so on).
const removeRounds = 6

// removeOnce removes every container matching f, all at once, then every
// network matching f.
func (e *Engine) removeOnce(ctx context.Context, f client.Filters) error {
	res, err := e.cli.ContainerList(ctx, client.ContainerListOptions{All: true, Filters: f})
	if err != nil {
		return fmt.Errorf("list containers: %w", err)
	}
	var errs []error
	var wg sync.WaitGroup
	var mu sync.Mutex
	for _, c := range res.Items {
		wg.Go(func() {
			if _, err := e.cli.ContainerRemove(ctx, c.ID, client.ContainerRemoveOptions{Force: true, RemoveVolumes: true}); err != nil && !isNotFound(err) {
				mu.Lock()
				errs = append(errs, fmt.Errorf("remove container %s (%s): %w", c.ID[:12], c.Labels[LabelNode], err))
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if len(errs) > 0 {
		// A network cannot go while a container on it is left.
		return errors.Join(errs...)
	}
	nets, err := e.cli.NetworkList(ctx, client.NetworkListOptions{Filters: f})
	if err != nil {
		return fmt.Errorf("list networks: %w", err)
	}
	for _, n := range nets.Items {
		if _, err := e.cli.NetworkRemove(ctx, n.ID, client.NetworkRemoveOptions{}); err != nil && !isNotFound(err) {
			errs = append(errs, fmt.Errorf("remove network %s: %w", n.Name, err))
		}
	}
	return errors.Join(errs...)
}

// SaveLogs writes each node's container output to dir/<node>.log.
func (t *Topology) SaveLogs(ctx context.Context, dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("save logs: %w", err)
	}
	var errs []error
	for _, n := range t.removed {
		// their containers are gone: the logs were kept when they went
		if err := os.WriteFile(filepath.Join(dir, n.Name+".log"), n.pastLogs, 0o644); err != nil {
			errs = append(errs, fmt.Errorf("logs of %s: %w", n.Name, err))
		}
	}
	for _, n := range t.Nodes {
		rc, err := n.c.Logs(ctx)
		if err != nil {
			errs = append(errs, fmt.Errorf("logs of %s: %w", n.Name, err))
			continue
		}
		f, err := os.Create(filepath.Join(dir, n.Name+".log"))
		if err == nil {
			// the containers Reinstall replaced come first
			if _, err = f.Write(n.pastLogs); err == nil {
				_, err = io.Copy(f, rc)
			}
			f.Close()
		}
		rc.Close()
		if err != nil {
			errs = append(errs, fmt.Errorf("logs of %s: %w", n.Name, err))
		}
	}
	return errors.Join(errs...)
}
