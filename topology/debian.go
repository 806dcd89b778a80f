package topology

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/moby/moby/client"
)

// Mirror is Debian's archive; LOCKCHECK_DEBIAN_MIRROR points at another.
func Mirror() string {
	if m := os.Getenv("LOCKCHECK_DEBIAN_MIRROR"); m != "" {
		return m
	}
	return "http://deb.debian.org/debian"
}

// imageExtras are installed into every built image: iptables cuts a node
// off for partitions.
var imageExtras = []string{"iptables"}

// BuildDebian builds a build's image offline: debootstrap a minimal root
// filesystem from Debian's archive, install the server package, import the
// tree as an image tagged with the exact package version. It reuses an
// image built before.
func (e *Engine) BuildDebian(ctx context.Context, b Build, progress io.Writer) (ref, pkg string, err error) {
	if b.Debian == nil {
		return "", "", fmt.Errorf("%s has no Debian package", b.Name)
	}
	if ref, pkg, ok := e.builtImage(ctx, b.Name); ok {
		return ref, pkg, nil
	}
	if why := debootstrapMissing(); why != "" {
		return "", "", fmt.Errorf("build %s: %s: apt-get install debootstrap (as root)", b.Name, why)
	}
	start := time.Now()
	root, err := os.MkdirTemp(buildDir(), "rootfs-"+b.Name+"-")
	if err != nil {
		return "", "", fmt.Errorf("build %s: %w", b.Name, err)
	}
	defer os.RemoveAll(root)
	logPath := root + ".log"
	logf, err := os.Create(logPath)
	if err != nil {
		return "", "", fmt.Errorf("build %s: %w", b.Name, err)
	}
	defer logf.Close()
	step := func(what string, name string, args ...string) error {
		fmt.Fprintf(progress, "%s: %s (%s)\n", b.Name, what, time.Since(start).Round(time.Second))
		cmd := exec.CommandContext(ctx, name, args...)
		cmd.Stdout, cmd.Stderr = logf, logf
		cmd.Env = append(os.Environ(), "DEBIAN_FRONTEND=noninteractive", "LC_ALL=C")
		if err := cmd.Run(); err != nil {
			fmt.Fprintf(progress, "%s: %s failed; last lines of %s:\n%s\n", b.Name, what, logPath, tail(logPath, 8))
			return fmt.Errorf("build %s: %s failed (%v): see %s; check that Debian's archive (%s) is reachable", b.Name, what, err, logPath, Mirror())
		}
		return nil
	}
	d := b.Debian
	include := append([]string(nil), imageExtras...)
	if d.Pocket == "" {
		include = append(include, d.Package)
	}
	if err := step("debootstrap "+d.Suite, "debootstrap", "--variant=minbase", "--include="+strings.Join(include, ","), d.Suite, root, Mirror()); err != nil {
		return "", "", err
	}
	if d.Pocket != "" {
		list := fmt.Sprintf("deb %s %s main\n", Mirror(), d.Pocket)
		if err := os.WriteFile(filepath.Join(root, "etc/apt/sources.list.d/lockcheck.list"), []byte(list), 0o644); err != nil {
			return "", "", fmt.Errorf("build %s: %w", b.Name, err)
		}
		// The archive's snapshot of sid and experimental may carry Release
		// files past their Valid-Until date; the packages are still right.
		apt := []string{root, "apt-get", "-o", "Acquire::Check-Valid-Until=false", "-y"}
		if err := step("apt-get update "+d.Pocket, "chroot", append(apt, "update")...); err != nil {
			return "", "", err
		}
		if err := step("install "+d.Package+" from "+d.Pocket, "chroot", append(apt, "install", "--no-install-recommends", "-t", d.Pocket, d.Package)...); err != nil {
			return "", "", err
		}
	}
	out, err := exec.CommandContext(ctx, "chroot", root, "dpkg-query", "-W", "-f", "${Version}", d.Package).Output()
	if err != nil {
		return "", "", fmt.Errorf("build %s: read installed version of %s: %w", b.Name, d.Package, err)
	}
	pkg = strings.TrimSpace(string(out))
	prepareRoot(root)
	ref = debianTag(b, pkg)
	fmt.Fprintf(progress, "%s: import %s as %s (%s)\n", b.Name, d.Package+" "+pkg, ref, time.Since(start).Round(time.Second))
	if err := e.importRoot(ctx, root, ref, b, pkg); err != nil {
		return "", "", fmt.Errorf("build %s: %w", b.Name, err)
	}
	fmt.Fprintf(progress, "%s: built %s in %s\n", b.Name, ref, time.Since(start).Round(time.Second))
	os.Remove(logPath)
	return ref, pkg, nil
}

// prepareRoot trims what an image does not need and makes the folders the
// nodes write to.
func prepareRoot(root string) {
	for _, dir := range []string{"var/cache/apt/archives", "var/lib/apt/lists"} {
		entries, _ := os.ReadDir(filepath.Join(root, dir))
		for _, e := range entries {
			if !e.IsDir() {
				os.Remove(filepath.Join(root, dir, e.Name()))
			}
		}
	}
	for _, dir := range []string{"data", "etc/lockcheck", "var/lib/lockcheck", "usr/lib/lockcheck"} {
		os.MkdirAll(filepath.Join(root, dir), 0o755)
	}
}

// importRoot streams the tree as a tar into the engine.
func (e *Engine) importRoot(ctx context.Context, root, ref string, b Build, pkg string) error {
	tar := exec.CommandContext(ctx, "tar", "--numeric-owner", "-C", root, "-c", ".")
	stdout, err := tar.StdoutPipe()
	if err != nil {
		return err
	}
	var stderr bytes.Buffer
	tar.Stderr = &stderr
	if err := tar.Start(); err != nil {
		return fmt.Errorf("tar root filesystem: %w", err)
	}
	changes := []string{
		"LABEL " + LabelImage + "=" + b.Name,
		"LABEL " + LabelPackage + "=" + pkg,
		"WORKDIR /data",
		`CMD ["/usr/bin/` + b.Binary() + `"]`,
	}
	res, err := e.cli.ImageImport(ctx, client.ImageImportSource{Source: stdout, SourceName: "-"}, ref, client.ImageImportOptions{Changes: changes})
	if err == nil {
		_, err = io.Copy(io.Discard, res)
		res.Close()
	}
	if werr := tar.Wait(); werr != nil && err == nil {
		err = fmt.Errorf("tar root filesystem: %v: %s", werr, stderr.String())
	}
	if err != nil {
		return fmt.Errorf("import image %s: %w", ref, err)
	}
	return nil
}

// buildDir is where root filesystems are assembled: a disk-backed folder,
// since /tmp may be a small tmpfs or mounted noexec.
func buildDir() string {
	dir := os.Getenv("LOCKCHECK_BUILD_DIR")
	if dir == "" {
		dir = "/var/tmp/lockcheck"
	}
	os.MkdirAll(dir, 0o755)
	return dir
}

func tail(path string, n int) string {
	b, _ := os.ReadFile(path)
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
