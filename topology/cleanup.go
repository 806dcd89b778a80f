package topology

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"

	"github.com/moby/moby/client"
)

// RemoveRun removes the containers and networks labelled with a run id
// (every run when runID is ""), whatever state they are in.
func (e *Engine) RemoveRun(ctx context.Context, runID string) error {
	label := LabelManaged + "=true"
	if runID != "" {
		label = LabelRun + "=" + runID
	}
	f := client.Filters{}.Add("label", label)
	var errs []error
	res, err := e.cli.ContainerList(ctx, client.ContainerListOptions{All: true, Filters: f})
	if err != nil {
		return fmt.Errorf("list containers: %w", err)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	for _, c := range res.Items {
		wg.Go(func() {
			if _, err := e.cli.ContainerRemove(ctx, c.ID, client.ContainerRemoveOptions{Force: true, RemoveVolumes: true}); err != nil && !isNotFound(err) {
				mu.Lock()
				errs = append(errs, fmt.Errorf("remove container %s: %w", c.ID[:12], err))
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	nets, err := e.cli.NetworkList(ctx, client.NetworkListOptions{Filters: f})
	if err != nil {
		return errors.Join(append(errs, fmt.Errorf("list networks: %w", err))...)
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
