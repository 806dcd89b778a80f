package topology

import (
	"archive/tar"
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/moby/moby/client"
	tc "github.com/testcontainers/testcontainers-go"
)

// nodeFile is a file put into a node's container before it starts.
type nodeFile struct {
	path string
	mode int64
	data []byte
}

// The files a node starts with (its configuration, its clock offset, the
// clock shim) reach its container through its environment: the launch
// script unpacks filesEnv, a base64 tar archive, before the server starts.
// A copy into a created container mounts its file system first (with
// fuse-overlayfs, six containers started at once took 0.35-0.55 s longer
// with one copy each than with none). Larger files (a reinstalled node's
// data) are copied, in one archive.
const (
	filesEnv = "LOCKCHECK_FILES"
	// filesMarker is in every archive: a restarted container finds it and
	// unpacks nothing, keeping the configuration its server rewrote and
	// the clock offset it was given.
	filesMarker = "/var/lib/lockcheck/.files"
	// maxFilesEnv bounds the encoded archive: Linux takes one environment
	// string of up to 128 KiB.
	maxFilesEnv = 96 << 10
)

// withFiles puts files into the container: through its environment when
// they are small enough, otherwise copied once the container is created.
func (t *Topology) withFiles(files []nodeFile) (tc.CustomizeRequestOption, error) {
	archive, err := tarOf(append(files, nodeFile{path: filesMarker, mode: 0o644}))
	if err != nil {
		return nil, fmt.Errorf("archive the node's files: %w", err)
	}
	if base64.StdEncoding.EncodedLen(archive.Len()) <= maxFilesEnv {
		return tc.WithEnv(map[string]string{filesEnv: base64.StdEncoding.EncodeToString(archive.Bytes())}), nil
	}
	return tc.WithAdditionalLifecycleHooks(tc.ContainerLifecycleHooks{
		PostCreates: []tc.ContainerHook{func(ctx context.Context, c tc.Container) error {
			if _, err := t.eng.cli.CopyToContainer(ctx, c.GetContainerID(), client.CopyToContainerOptions{DestinationPath: "/", Content: bytes.NewReader(archive.Bytes())}); err != nil {
				return fmt.Errorf("copy files into the container: %w", err)
			}
			return nil
		}},
	}), nil
}

// tarOf archives files under the root, with their folders.
func tarOf(files []nodeFile) (*bytes.Buffer, error) {
	var b bytes.Buffer
	tw := tar.NewWriter(&b)
	var dirs []string
	for _, f := range files {
		for d := path.Dir(f.path); d != "/" && !slices.Contains(dirs, d); d = path.Dir(d) {
			dirs = append(dirs, d)
		}
	}
	slices.Sort(dirs) // parents first
	for _, d := range dirs {
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: strings.TrimPrefix(d, "/") + "/", Mode: 0o755}); err != nil {
			return nil, err
		}
	}
	for _, f := range files {
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: strings.TrimPrefix(f.path, "/"), Mode: f.mode, Size: int64(len(f.data))}); err != nil {
			return nil, err
		}
		if _, err := tw.Write(f.data); err != nil {
			return nil, err
		}
	}
	return &b, tw.Close()
}
