package topology

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sort"
	"strings"
	"time"

	"github.com/moby/moby/client"
)

// Status says whether a build's image can be had here.
type Status string

const (
	Present     Status = "present"
	Pullable    Status = "pullable"
	Buildable   Status = "buildable"
	Unavailable Status = "unavailable"
)

// Image is what Resolve found for one build.
type Image struct {
	Build  Build
	Status Status
	// Ref is the image to run (Present), to pull (Pullable) or the tag a
	// build will carry (Buildable).
	Ref string
	// Package is the Debian package version of a built image.
	Package string
	// Reason says why the build is unavailable, and Fix what would provide it.
	Reason string
	Fix    string
}

// Sources holds the user's choices that override the catalog: a tag to use
// for a build, or a server binary to put on a Debian base image.
type Sources struct {
	// Tags maps a build name to an image tag in the local engine.
	Tags map[string]string
	// Binaries maps a build name (known or new) to a valkey-server binary.
	Binaries map[string]string
	// Registry, when set (HOST:PORT), is where official images are pulled
	// from instead of their public registry: a mirror, or a private
	// registry holding copies under the official names. Naming one says
	// the official images are wanted: they come before images lockcheck
	// built from Debian's packages.
	Registry string
}

// Lookup finds a build by name: a known build, or a user's own binary's
// (Binaries) under a name lockcheck does not know.
func (src Sources) Lookup(name string) (Build, error) {
	b, err := Lookup(name)
	if err == nil {
		return b, nil
	}
	if _, ok := src.Binaries[name]; ok {
		return CustomBuild(name), nil
	}
	return b, err
}

// OfficialRef is the reference of b's official image, in registry when
// one is named.
func (b Build) OfficialRef(registry string) string {
	if registry == "" || b.Official == "" {
		return b.Official
	}
	return registry + "/" + b.Official
}

// Resolve finds how to get a build's image, trying in order: a local image
// (the user's tag, one lockcheck built, the official tag), the official
// image from a registry, a build from Debian's archive, and otherwise
// reports it unavailable with the reason and the fix.
func (e *Engine) Resolve(ctx context.Context, b Build, src Sources) Image {
	img := Image{Build: b}
	if bin, ok := src.Binaries[b.Name]; ok {
		return e.resolveBinary(ctx, b, bin)
	}
	if tag, ok := src.Tags[b.Name]; ok {
		if e.hasImage(ctx, tag) {
			img.Status, img.Ref = Present, tag
			return img
		}
		img.Status, img.Ref = Unavailable, tag
		img.Reason = fmt.Sprintf("image %s is not in the local engine", tag)
		img.Fix = fmt.Sprintf("docker pull %s, or docker load it from a saved file", tag)
		return img
	}
	var regErr error
	if src.Registry != "" && b.Official != "" {
		ref := b.OfficialRef(src.Registry)
		if e.hasImage(ctx, ref) {
			img.Status, img.Ref = Present, ref
			return img
		}
		if regErr = e.registryAnswers(ctx, ref); regErr == nil {
			img.Status, img.Ref = Pullable, ref
			return img
		}
	}
	if ref, pkg, ok := e.builtImage(ctx, b.Name); ok {
		img.Status, img.Ref, img.Package = Present, ref, pkg
		return img
	}
	if b.Official != "" && e.hasImage(ctx, b.Official) {
		img.Status, img.Ref = Present, b.Official
		return img
	}
	if b.Official != "" && src.Registry == "" {
		if regErr = e.registryAnswers(ctx, b.Official); regErr == nil {
			img.Status, img.Ref = Pullable, b.Official
			return img
		}
	}
	if b.Debian != nil {
		if why := debootstrapMissing(); why != "" {
			img.Status, img.Reason, img.Fix = Unavailable, why, "apt-get install debootstrap (as root)"
			return img
		}
		img.Status, img.Ref = Buildable, debianTag(b, "")
		return img
	}
	img.Status = Unavailable
	img.Reason = fmt.Sprintf("no local image, Debian's archive has no %s package", b.Name)
	if regErr != nil {
		img.Reason += fmt.Sprintf(", and the registry does not answer for %s (%s)", b.OfficialRef(src.Registry), firstLine(regErr))
	}
	img.Fix = fmt.Sprintf("docker pull %s where a registry answers (or docker load a saved copy), or --server-binary %s=PATH with a valkey-server built elsewhere", b.Official, b.Name)
	return img
}

// Obtain makes a build's image present: it pulls or builds as Resolve
// found possible, and returns the reference to run.
func (e *Engine) Obtain(ctx context.Context, b Build, src Sources, progress io.Writer) (Image, error) {
	img := e.Resolve(ctx, b, src)
	switch img.Status {
	case Present:
		return img, nil
	case Pullable:
		fmt.Fprintf(progress, "pulling %s for %s\n", img.Ref, b.Name)
		rc, err := e.cli.ImagePull(ctx, img.Ref, client.ImagePullOptions{})
		if err != nil {
			return img, fmt.Errorf("pull %s: %w", img.Ref, err)
		}
		_, err = io.Copy(io.Discard, rc)
		rc.Close()
		if err != nil {
			return img, fmt.Errorf("pull %s: %w", img.Ref, err)
		}
		img.Status = Present
		return img, nil
	case Buildable:
		if bin, ok := src.Binaries[b.Name]; ok {
			ref, err := e.BuildBinary(ctx, b, bin, src, progress)
			if err != nil {
				return img, err
			}
			img.Status, img.Ref = Present, ref
			return img, nil
		}
		ref, pkg, err := e.BuildDebian(ctx, b, progress)
		if err != nil {
			return img, err
		}
		img.Status, img.Ref, img.Package = Present, ref, pkg
		return img, nil
	}
	return img, fmt.Errorf("%s is unavailable: %s; fix: %s", b.Name, img.Reason, img.Fix)
}

func (e *Engine) hasImage(ctx context.Context, ref string) bool {
	_, err := e.cli.ImageInspect(ctx, ref)
	return err == nil
}

// builtImage finds the newest image lockcheck built for a build.
func (e *Engine) builtImage(ctx context.Context, name string) (ref, pkg string, ok bool) {
	f := client.Filters{}.Add("label", LabelImage+"="+name)
	res, err := e.cli.ImageList(ctx, client.ImageListOptions{Filters: f})
	if err != nil || len(res.Items) == 0 {
		return "", "", false
	}
	items := res.Items
	sort.Slice(items, func(i, j int) bool { return items[i].Created > items[j].Created })
	for _, it := range items {
		if len(it.RepoTags) > 0 {
			return ownTag(it.RepoTags), it.Labels[LabelPackage], true
		}
	}
	return "", "", false
}

// ownTag picks lockcheck's own tag of an image among its tags: another
// tag of the same image (one pushed to a registry, which the registry spec
// adds and drops while other suites run) may be gone by the time a
// container is created from it, and the engine would then try to pull it.
func ownTag(tags []string) string {
	for _, t := range tags {
		if strings.HasPrefix(t, "lockcheck/") {
			return t
		}
	}
	return tags[0]
}

// registryAnswers asks the registry for the image's manifest without
// pulling it; a machine with no registry fails fast.
func (e *Engine) registryAnswers(ctx context.Context, ref string) error {
	ctx, cancel := context.WithTimeout(ctx, 8*time.Second)
	defer cancel()
	_, err := e.cli.DistributionInspect(ctx, ref, client.DistributionInspectOptions{})
	return err
}

// debootstrapMissing says why an offline build cannot run here, or "".
func debootstrapMissing() string {
	if _, err := exec.LookPath("debootstrap"); err != nil {
		return "debootstrap is not installed"
	}
	if os.Geteuid() != 0 {
		return "building from Debian's packages needs root (debootstrap and chroot)"
	}
	return ""
}

// debianTag is the tag of an image built from a Debian package version;
// Docker tags allow no "+", "~" or ":" so they become "-".
func debianTag(b Build, pkgVersion string) string {
	v := pkgVersion
	if v == "" {
		v = b.Debian.Upstream
	}
	if i := strings.IndexByte(v, ':'); i >= 0 { // epoch
		v = v[i+1:]
	}
	v = strings.NewReplacer("+", "-", "~", "-").Replace(v)
	return fmt.Sprintf("lockcheck/%s:%s", b.Family, v)
}
