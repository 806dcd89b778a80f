package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"sync"
	"text/tabwriter"

	"github.com/lockcheck/lockcheck/topology"
)

func runImages(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlags("images", stderr)
	build := fs.Bool("build", false, "build the offline images (all buildable ones, or the builds named after the flags)")
	var sf sourceFlags
	sf.register(fs)
	if ok, code := parse(fs, args, stderr); !ok {
		return code
	}
	src, err := sf.sources()
	if err != nil {
		return fail(stderr, "%v", err)
	}
	builds, err := sf.builds(fs.Args())
	if err != nil {
		return fail(stderr, "%v", err)
	}
	if len(builds) == 0 {
		builds = topology.Builds()
		for name := range src.Binaries {
			if _, err := topology.Lookup(name); err != nil {
				builds = append(builds, topology.CustomBuild(name))
			}
		}
	}
	if !settled(stderr, builds, src) {
		return 0
	}
	eng, err := topology.Connect(ctx, nil)
	if err != nil {
		return fail(stderr, "%v", err)
	}
	defer eng.Close()
	if *build {
		explicit := len(fs.Args()) > 0
		var todo []topology.Build
		for _, b := range builds {
			img := eng.Resolve(ctx, b, src)
			if img.Status != topology.Buildable && !(explicit && img.Status == topology.Pullable) {
				if explicit && img.Status == topology.Unavailable {
					return fail(stderr, "%s is unavailable: %s; fix: %s", b.Name, img.Reason, img.Fix)
				}
				continue
			}
			todo = append(todo, b)
		}
		if err := obtainAll(ctx, eng, todo, src, stderr); err != nil {
			return fail(stderr, "%v", err)
		}
	}
	tw := tabwriter.NewWriter(stdout, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "BUILD\tVERSION\tOFFICIAL\tIMAGE\tSTATUS")
	for _, b := range builds {
		img := eng.Resolve(ctx, b, src)
		// "9.2|9.1.24*" reads "9.2 or 9.1.24x".
		version := strings.NewReplacer("|", " or ", "*", "x").Replace(b.Version)
		if img.Package != "" {
			version = img.Package
		} else if b.Debian != nil && img.Status == topology.Buildable {
			version = b.Debian.Upstream
		}
		status := string(img.Status)
		if img.Status == topology.Unavailable {
			status += ": " + img.Reason + "; fix: " + img.Fix
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", b.Name, version, orDash(b.OfficialRef(src.Registry)), orDash(img.Ref), status)
	}
	tw.Flush()
	return 0
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// buildsAtOnce is how many images are obtained at once. Builds from one
// Debian suite share one debootstrap (the catalog's five builds come from
// three suites), so all five at once run three debootstraps, each waiting
// on downloads about as long as it computes, and then five package
// installs on copies of the bases.
const buildsAtOnce = 5

// obtainAll obtains the images of builds, buildsAtOnce at a time; each
// build's progress lines carry its name. The first error is returned,
// after every build started has ended.
func obtainAll(ctx context.Context, eng *topology.Engine, builds []topology.Build, src topology.Sources, progress io.Writer) error {
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs []error
	)
	w := &lockedWriter{w: progress}
	slots := make(chan struct{}, buildsAtOnce)
	for _, b := range builds {
		wg.Go(func() {
			slots <- struct{}{}
			defer func() { <-slots }()
			if _, err := eng.Obtain(ctx, b, src, w); err != nil {
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if len(errs) > 0 {
		return errs[0]
	}
	return nil
}

// lockedWriter serialises the lines of builds running at once.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
