package topology

import (
	"fmt"
	"sort"
	"strings"
)

// Family is the server's lineage: it decides the binary's name and which
// INFO field carries the real version.
type Family string

const (
	Valkey Family = "valkey"
	Redis  Family = "redis"
)

// Debian says how a build is made offline from Debian's archive: debootstrap
// Suite, then install Package from Pocket (a suite added on top, such as
// bookworm-backports or experimental) when it is not Suite itself.
type Debian struct {
	Suite   string
	Pocket  string
	Package string
	// Upstream is the version the packaged server reports.
	Upstream string
}

// Build is one server build lockcheck can run: a name users type, the
// version the server must report, and the ways to obtain its image.
type Build struct {
	Name   string
	Family Family
	// Version is the version prefix the server must report (INFO server:
	// valkey_version, or redis_version for Redis). A build from Debian
	// must report Debian.Upstream exactly.
	Version string
	// Official is the image on a public registry, tried when no local image
	// is present.
	Official string
	// Debian is nil when Debian's archive has no package of this line.
	Debian *Debian
}

// Binary is the server executable's name in the image.
func (b Build) Binary() string { return string(b.Family) + "-server" }

// VersionField is the INFO server field holding the real version.
func (b Build) VersionField() string { return string(b.Family) + "_version" }

// VersionMatches reports whether a version reported by a running server is
// one this build may report. Version lists alternatives separated by "|";
// each is a release line ("9.1" matches 9.1 and 9.1.x) or, ending in "*", a
// raw prefix: release candidates may report a number in the previous
// line's 24x patch range instead of their own.
func (b Build) VersionMatches(reported string) bool {
	for _, want := range strings.Split(b.Version, "|") {
		if p, ok := strings.CutSuffix(want, "*"); ok {
			if strings.HasPrefix(reported, p) {
				return true
			}
		} else if reported == want || strings.HasPrefix(reported, want+".") {
			return true
		}
	}
	return false
}

// catalog holds every build lockcheck knows. Adding a build is one entry.
var catalog = []Build{
	{Name: "valkey-8.0", Family: Valkey, Version: "8.0", Official: "valkey/valkey:8.0.12",
		Debian: &Debian{Suite: "bookworm", Pocket: "bookworm-backports", Package: "valkey-server", Upstream: "8.0.1"}},
	{Name: "valkey-8.1", Family: Valkey, Version: "8.1", Official: "valkey/valkey:8.1.11",
		Debian: &Debian{Suite: "trixie", Package: "valkey-server", Upstream: "8.1.1"}},
	{Name: "valkey-9.0", Family: Valkey, Version: "9.0", Official: "valkey/valkey:9.0.7"},
	{Name: "valkey-9.1", Family: Valkey, Version: "9.1", Official: "valkey/valkey:9.1.3",
		Debian: &Debian{Suite: "sid", Package: "valkey-server", Upstream: "9.1.2"}},
	{Name: "valkey-9.2-rc", Family: Valkey, Version: "9.2|9.1.24*", Official: "valkey/valkey:9.2.0-rc2"},
	{Name: "valkey-9.2", Family: Valkey, Version: "9.2", Official: "valkey/valkey:9.2.1"},
	{Name: "redis-7.0", Family: Redis, Version: "7.0", Official: "redis:7.0",
		Debian: &Debian{Suite: "bookworm", Package: "redis-server", Upstream: "7.0.15"}},
	{Name: "redis-8.6", Family: Redis, Version: "8.6", Official: "redis:8.6",
		Debian: &Debian{Suite: "sid", Pocket: "experimental", Package: "redis-server", Upstream: "8.6.3"}},
}

// Builds lists every known build in catalog order.
func Builds() []Build { return append([]Build(nil), catalog...) }

// Lookup finds a build by name.
func Lookup(name string) (Build, error) {
	for _, b := range catalog {
		if b.Name == name {
			return b, nil
		}
	}
	return Build{}, fmt.Errorf("unknown server build %q: choose one of %s", name, strings.Join(BuildNames(), ", "))
}

// BuildNames lists the known build names.
func BuildNames() []string {
	var names []string
	for _, b := range catalog {
		names = append(names, b.Name)
	}
	return names
}

// Kind is a topology's shape.
type Kind string

const (
	Standalone Kind = "standalone"
	Replicated Kind = "replicated"
	Sentinel   Kind = "sentinel"
	Cluster    Kind = "cluster"
	// Redlock is N independent primaries, no replication between them:
	// what the Redlock algorithm locks a majority of.
	Redlock Kind = "redlock"
)

// Kinds lists the topology kinds of one primary's lineage (one server,
// its replicas, Sentinel, the cluster), smallest first: what the matrix
// and the suites sweep. Redlock, a client-side algorithm over several
// independent servers, is named on its own.
func Kinds() []Kind { return []Kind{Standalone, Replicated, Sentinel, Cluster} }

// allKinds is every kind a scenario can name.
func allKinds() []Kind { return append(Kinds(), Redlock) }

// ParseKind checks a topology name.
func ParseKind(s string) (Kind, error) {
	for _, k := range allKinds() {
		if string(k) == s {
			return k, nil
		}
	}
	names := make([]string, 0, 5)
	for _, k := range allKinds() {
		names = append(names, string(k))
	}
	sort.Strings(names)
	return "", fmt.Errorf("unknown topology %q: choose one of %s", s, strings.Join(names, ", "))
}
