package topology

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/moby/moby/client"
)

// BaseBuild is the Debian build whose image carries a user's own binary:
// its root filesystem has the newest packaged server's libraries and tools.
const BaseBuild = "valkey-9.1"

// CustomBuild makes a build for a user's binary under a new name. The
// version is not known in advance: any reported version is accepted.
func CustomBuild(name string) Build {
	return Build{Name: name, Family: Valkey, Version: ""}
}

// resolveBinary reports a user's binary as present when its image was
// built before, buildable when the file is there and the base can be had.
func (e *Engine) resolveBinary(ctx context.Context, b Build, path string) Image {
	img := Image{Build: b}
	sum, err := fileSum(path)
	if err != nil {
		img.Status, img.Reason, img.Fix = Unavailable, fmt.Sprintf("server binary %s: %v", path, err), "pass --server-binary NAME=PATH with a readable valkey-server"
		return img
	}
	img.Ref = binaryTag(b, sum)
	if e.hasImage(ctx, img.Ref) {
		img.Status = Present
		return img
	}
	base, _ := Lookup(BaseBuild)
	if bi := e.Resolve(ctx, base, Sources{}); bi.Status == Unavailable {
		img.Status, img.Reason, img.Fix = Unavailable, "base image "+BaseBuild+": "+bi.Reason, bi.Fix
		return img
	}
	img.Status = Buildable
	return img
}

// BuildBinary puts a user's valkey-server onto the base image, replacing
// the packaged one.
func (e *Engine) BuildBinary(ctx context.Context, b Build, path string, src Sources, progress io.Writer) (string, error) {
	sum, err := fileSum(path)
	if err != nil {
		return "", fmt.Errorf("server binary %s: %w", path, err)
	}
	ref := binaryTag(b, sum)
	if e.hasImage(ctx, ref) {
		return ref, nil
	}
	base, _ := Lookup(BaseBuild)
	bi, err := e.Obtain(ctx, base, Sources{}, progress)
	if err != nil {
		return "", fmt.Errorf("base image for %s: %w", b.Name, err)
	}
	bin, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("server binary %s: %w", path, err)
	}
	dockerfile := fmt.Sprintf("FROM %s\nCOPY valkey-server /usr/bin/valkey-server\nLABEL %s=%s\n", bi.Ref, LabelImage, b.Name)
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, f := range []struct {
		name string
		mode int64
		data []byte
	}{{"Dockerfile", 0o644, []byte(dockerfile)}, {"valkey-server", 0o755, bin}} {
		if err := tw.WriteHeader(&tar.Header{Name: f.name, Mode: f.mode, Size: int64(len(f.data))}); err != nil {
			return "", err
		}
		if _, err := tw.Write(f.data); err != nil {
			return "", err
		}
	}
	if err := tw.Close(); err != nil {
		return "", err
	}
	fmt.Fprintf(progress, "%s: put %s onto %s as %s\n", b.Name, path, bi.Ref, ref)
	res, err := e.cli.ImageBuild(ctx, &buf, client.ImageBuildOptions{Tags: []string{ref}, Remove: true, ForceRemove: true})
	if err != nil {
		return "", fmt.Errorf("build image for %s: %w", b.Name, err)
	}
	defer res.Body.Close()
	dec := json.NewDecoder(res.Body)
	for {
		var msg struct {
			Error string `json:"error"`
		}
		if err := dec.Decode(&msg); err == io.EOF {
			break
		} else if err != nil {
			return "", fmt.Errorf("build image for %s: %w", b.Name, err)
		}
		if msg.Error != "" {
			return "", fmt.Errorf("build image for %s: %s", b.Name, msg.Error)
		}
	}
	return ref, nil
}

func binaryTag(b Build, sum string) string {
	return "lockcheck/custom:" + strings.ToLower(b.Name) + "-" + sum[:12]
}

func fileSum(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
