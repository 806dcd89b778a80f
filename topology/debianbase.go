package topology

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"
)

// debianBases shares one debootstrap of a Debian suite among the builds
// that install their package on it (valkey-9.1 and redis-8.6 on sid,
// valkey-8.0 and redis-7.0 on bookworm): each build copies the base tree
// (about a second) instead of bootstrapping its own (a minute alone, two
// with three at once on two cores). A base lives as long as its Engine.
type debianBases struct {
	mu sync.Mutex
	m  map[string]*debianBase
}

type debianBase struct {
	done chan struct{} // closed when dir is ready or err is set
	dir  string
	err  error
}

// get returns suite's base tree, bootstrapping it on first use; builds
// asking meanwhile wait for that one bootstrap.
func (d *debianBases) get(ctx context.Context, suite string, progress io.Writer) (string, error) {
	d.mu.Lock()
	if d.m == nil {
		d.m = map[string]*debianBase{}
	}
	b, ok := d.m[suite]
	if !ok {
		b = &debianBase{done: make(chan struct{})}
		d.m[suite] = b
	}
	d.mu.Unlock()
	if !ok {
		b.dir, b.err = bootstrap(ctx, suite, progress)
		close(b.done)
	}
	select {
	case <-b.done:
		return b.dir, b.err
	case <-ctx.Done():
		return "", ctx.Err()
	}
}

// remove deletes every base tree made. Close comes after the builds have
// ended, so none is still being made then; a bootstrap that was killed
// removes its own tree, and make clean what a killed lockcheck left.
func (d *debianBases) remove() {
	d.mu.Lock()
	defer d.mu.Unlock()
	for suite, b := range d.m {
		select {
		case <-b.done:
			if b.dir != "" {
				os.RemoveAll(b.dir)
			}
			delete(d.m, suite)
		default:
		}
	}
}

// bootstrap makes a minimal root filesystem of suite with the extras every
// image carries; the suite's package lists come with it, so a package of
// the suite installs without an apt-get update.
func bootstrap(ctx context.Context, suite string, progress io.Writer) (string, error) {
	start := time.Now()
	dir, err := os.MkdirTemp(buildDir(), "base-"+suite+"-")
	if err != nil {
		return "", fmt.Errorf("debootstrap %s: %w", suite, err)
	}
	logPath := dir + ".log"
	fmt.Fprintf(progress, "debootstrap %s, shared by every build from %s\n", suite, suite)
	args := []string{"--variant=minbase", "--include=" + strings.Join(imageExtras, ","), suite, dir, Mirror()}
	if err := runLogged(ctx, logPath, "debootstrap", args...); err != nil {
		os.RemoveAll(dir)
		fmt.Fprintf(progress, "debootstrap %s failed; last lines of %s:\n%s\n", suite, logPath, tail(logPath, 8))
		return "", fmt.Errorf("debootstrap %s failed (%v): see %s; check that Debian's archive (%s) is reachable", suite, err, logPath, Mirror())
	}
	os.Remove(logPath)
	fmt.Fprintf(progress, "debootstrap %s done in %s\n", suite, time.Since(start).Round(time.Second))
	return dir, nil
}
