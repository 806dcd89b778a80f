package topology

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
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

// BuildDebian builds a build's image offline: copy a minimal root
// filesystem of the build's Debian suite (bootstrapped once per suite and
// Engine, see debianBases), install the server package from Debian's
// archive, import the tree as an image tagged with the exact package
// version. It reuses an image built before.
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
	d := b.Debian
	start := time.Now()
	base, err := e.bases.get(ctx, d.Suite, progress)
	if err != nil {
		return "", "", fmt.Errorf("build %s: %w", b.Name, err)
	}
	root, err := os.MkdirTemp(buildDir(), "rootfs-"+b.Name+"-")
	if err != nil {
		return "", "", fmt.Errorf("build %s: %w", b.Name, err)
	}
	defer os.RemoveAll(root)
	logPath := root + ".log"
	step := func(what string, name string, args ...string) error {
		fmt.Fprintf(progress, "%s: %s (%s)\n", b.Name, what, time.Since(start).Round(time.Second))
		if err := runLogged(ctx, logPath, name, args...); err != nil {
			fmt.Fprintf(progress, "%s: %s failed; last lines of %s:\n%s\n", b.Name, what, logPath, tail(logPath, 8))
			return fmt.Errorf("build %s: %s failed (%v): see %s; check that Debian's archive (%s) is reachable", b.Name, what, err, logPath, Mirror())
		}
		return nil
	}
	if err := step("copy the "+d.Suite+" base", "cp", "-a", base+"/.", root); err != nil {
		return "", "", err
	}
	// The archive's snapshot of sid and experimental may carry Release
	// files past their Valid-Until date; the packages are still right.
	// Maintainer scripts (systemd-tmpfiles) need /proc: the chroot runs in
	// its own PID and mount namespaces with a proc of its own, which ends
	// with it, whatever happens to lockcheck.
	apt := []string{"--fork", "--pid", "--mount-proc=" + filepath.Join(root, "proc"), "chroot", root,
		"apt-get", "-o", "Acquire::Check-Valid-Until=false", "-o", "Dpkg::Options::=--force-unsafe-io", "-y"}
	install := slices.Concat(apt, []string{"install", "--no-install-recommends"})
	if d.Pocket != "" {
		list := fmt.Sprintf("deb %s %s main\n", Mirror(), d.Pocket)
		if err := os.WriteFile(filepath.Join(root, "etc/apt/sources.list.d/lockcheck.list"), []byte(list), 0o644); err != nil {
			return "", "", fmt.Errorf("build %s: %w", b.Name, err)
		}
		if err := step("apt-get update "+d.Pocket, "unshare", slices.Concat(apt, []string{"update"})...); err != nil {
			return "", "", err
		}
		install = append(install, "-t", d.Pocket)
	}
	if err := step("install "+d.Package+" from "+cmp.Or(d.Pocket, d.Suite), "unshare", append(install, d.Package)...); err != nil {
		return "", "", err
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

// runLogged runs a build step with its output appended to logPath.
func runLogged(ctx context.Context, logPath, name string, args ...string) error {
	logf, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer logf.Close()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.Env = append(os.Environ(), "DEBIAN_FRONTEND=noninteractive", "LC_ALL=C")
	return cmd.Run()
}
