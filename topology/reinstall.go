package topology

import (
	"archive/tar"
	"context"
	"errors"
	"fmt"
	"io"
	"path"
	"strings"

	"github.com/moby/moby/client"
)

// ImageOf is the image of build name: the topology's own, or one of
// Options.Images.
func (t *Topology) ImageOf(name string) (string, bool) {
	if name == t.Build.Name {
		return t.Image, true
	}
	img, ok := t.opts.Images[name]
	return img, ok
}

// Image is the image node n's container runs.
func (n *Node) Image() string { return n.image }

// Reinstall moves node n onto another image, keeping its data and its
// address: what an operator does to upgrade (or roll back) one server of
// a deployment. A running server saves a snapshot first; the node's data
// folder (the snapshot, the configuration Sentinel or CLUSTER rewrote, a
// cluster node's nodes.conf and so its identity, a sentinel's view of its
// deployment) is copied out of the old container, which is removed, into
// a new container from image at the same address. It returns once the
// new server answers PING, or with the error that kept it from starting
// (a server that cannot load the data it was given exits: its log's last
// lines say why). Without keepData the data files stay behind and the
// node starts empty (its configuration and a cluster node's identity
// kept): a replica then resynchronises from its primary. The image must
// be of the topology's family: the launch command is the same.
func (n *Node) Reinstall(ctx context.Context, image string, keepData bool) error {
	if n.Running(ctx) && !n.Sentinel {
		if _, err := n.Do(ctx, "SAVE"); err != nil {
			return fmt.Errorf("reinstall %s: save before stopping: %w", n.Name, err)
		}
	}
	if n.Running(ctx) {
		if err := n.signal(ctx, "KILL"); err != nil {
			return fmt.Errorf("reinstall %s: %w", n.Name, err)
		}
		if err := n.waitStopped(ctx); err != nil {
			return fmt.Errorf("reinstall %s: %w", n.Name, err)
		}
	}
	files, err := n.dataFiles(ctx, keepData)
	if err != nil {
		return fmt.Errorf("reinstall %s: %w", n.Name, err)
	}
	if rc, err := n.c.Logs(ctx); err == nil {
		old, _ := io.ReadAll(rc)
		rc.Close()
		n.pastLogs = append(n.pastLogs, old...)
		n.pastLogs = append(n.pastLogs, fmt.Sprintf("--- lockcheck: %s reinstalled from %s on %s ---\n", n.Name, n.image, image)...)
	}
	n.closeClient()
	if _, err := n.topo.eng.cli.ContainerRemove(ctx, n.c.GetContainerID(), client.ContainerRemoveOptions{Force: true, RemoveVolumes: true}); err != nil && !isNotFound(err) {
		return fmt.Errorf("reinstall %s: remove the old container: %w", n.Name, err)
	}
	if err := n.topo.runNode(ctx, n, image, files); err != nil {
		if !n.Running(ctx) {
			// a server that exits at once (it cannot load its data) can be
			// gone before the engine maps its port: say why it exited
			return fmt.Errorf("reinstall %s on %s: %w: its server exited: %s (%v)", n.Name, image, errGaveUp, n.lastLog(ctx), err)
		}
		return fmt.Errorf("reinstall %s on %s: %w", n.Name, image, err)
	}
	if err := n.topo.waitFor(ctx, n.Name+" to answer PING on "+image, func(ctx context.Context) error {
		if !n.Running(ctx) {
			return fmt.Errorf("%w: its server exited: %s", errGaveUp, n.lastLog(ctx))
		}
		_, err := n.Do(ctx, "PING")
		return err
	}); err != nil {
		return fmt.Errorf("reinstall %s: %w", n.Name, err)
	}
	return nil
}

// dataFiles copies the stopped node's data folder out of its container,
// as files to put into the next one; without keepData, its configuration
// only.
func (n *Node) dataFiles(ctx context.Context, keepData bool) ([]nodeFile, error) {
	res, err := n.topo.eng.cli.CopyFromContainer(ctx, n.c.GetContainerID(), client.CopyFromContainerOptions{SourcePath: "/data"})
	if err != nil {
		return nil, fmt.Errorf("copy the data folder: %w", err)
	}
	defer res.Content.Close()
	var files []nodeFile
	tr := tar.NewReader(res.Content)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return files, nil
		}
		if err != nil {
			return nil, fmt.Errorf("read the data folder: %w", err)
		}
		if h.Typeflag != tar.TypeReg {
			continue
		}
		// entries are named data/..., the folder's own name first
		rel, ok := strings.CutPrefix(h.Name, "data/")
		if !ok || rel == path.Base(wipeMarker) || !keepData && isDataFile(rel) {
			continue
		}
		b, err := io.ReadAll(tr)
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", h.Name, err)
		}
		files = append(files, nodeFile{path: path.Join("/data", rel), mode: h.Mode & 0o777, data: b})
	}
}

// isDataFile says whether a file of the data folder holds keys (a
// snapshot or the AOF), not configuration.
func isDataFile(rel string) bool {
	return rel == "dump.rdb" || strings.HasPrefix(rel, "appendonly")
}

// lastLog is the last two lines of the node's log, for an error: a
// server that exits says why on the line before its last.
func (n *Node) lastLog(ctx context.Context) string {
	rc, err := n.c.Logs(ctx)
	if err != nil {
		return "no log: " + err.Error()
	}
	defer rc.Close()
	b, _ := io.ReadAll(rc)
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	lines = lines[max(0, len(lines)-2):]
	for i, l := range lines {
		lines[i] = strings.TrimSpace(l)
	}
	return strings.Join(lines, " / ")
}
