package topology

import (
	"strings"
	"testing"
)

func TestCatalogNamesAreUniqueAndComplete(t *testing.T) {
	want := []string{"valkey-8.0", "valkey-8.1", "valkey-9.0", "valkey-9.1", "valkey-9.2-rc", "valkey-9.2", "redis-7.0", "redis-8.6"}
	got := BuildNames()
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("builds = %v, want %v", got, want)
	}
	offline := 0
	for _, b := range Builds() {
		if b.Official == "" {
			t.Errorf("%s has no official image", b.Name)
		}
		if b.Debian != nil {
			offline++
			if !b.VersionMatches(b.Debian.Upstream) {
				t.Errorf("%s: its Debian version %s does not match %s", b.Name, b.Debian.Upstream, b.Version)
			}
		}
	}
	if offline != 5 {
		t.Errorf("%d builds from Debian's archive, want 5", offline)
	}
}

func TestLookupAndParseKind(t *testing.T) {
	if _, err := Lookup("valkey-9.1"); err != nil {
		t.Fatal(err)
	}
	_, err := Lookup("valkey-7")
	if err == nil || !strings.Contains(err.Error(), "valkey-9.1") {
		t.Fatalf("unknown build error should list the builds, got %v", err)
	}
	if k, err := ParseKind("sentinel"); err != nil || k != Sentinel {
		t.Fatalf("ParseKind(sentinel) = %v, %v", k, err)
	}
	if _, err := ParseKind("mesh"); err == nil || !strings.Contains(err.Error(), "cluster") {
		t.Fatalf("unknown topology error should list the kinds, got %v", err)
	}
}

func TestVersionMatches(t *testing.T) {
	cases := []struct {
		build, reported string
		want            bool
	}{
		{"valkey-8.1", "8.1.1", true},
		{"valkey-8.1", "8.1.11", true},
		{"valkey-8.1", "8.10.0", false},
		{"valkey-8.1", "8.0.1", false},
		{"valkey-9.2-rc", "9.2.0", true},
		{"valkey-9.2-rc", "9.1.242", true},
		{"valkey-9.2-rc", "9.1.2", false},
		{"valkey-9.2", "9.2.1", true},
		{"valkey-9.2", "9.1.242", false},
		{"redis-7.0", "7.0.15", true},
		{"redis-7.0", "7.2.4", false},
	}
	for _, c := range cases {
		b, _ := Lookup(c.build)
		if got := b.VersionMatches(c.reported); got != c.want {
			t.Errorf("%s.VersionMatches(%s) = %v, want %v", c.build, c.reported, got, c.want)
		}
	}
}

func TestDebianTag(t *testing.T) {
	b, _ := Lookup("redis-7.0")
	if got := debianTag(b, "5:7.0.15-1~deb12u7"); got != "lockcheck/redis:7.0.15-1-deb12u7" {
		t.Fatalf("debianTag = %s", got)
	}
	v, _ := Lookup("valkey-8.1")
	if got := debianTag(v, "8.1.1+dfsg1-3+deb13u3"); got != "lockcheck/valkey:8.1.1-dfsg1-3-deb13u3" {
		t.Fatalf("debianTag = %s", got)
	}
}

// A built image's own tag is chosen over a registry's tag of the same
// image, which may be dropped while it is in use.
func TestOwnTag(t *testing.T) {
	tags := []string{"127.0.0.1:38385/valkey/valkey:9.0.7", "lockcheck/valkey:8.1.1-dfsg1-3-deb13u3"}
	if got := ownTag(tags); got != tags[1] {
		t.Fatalf("ownTag(%v) = %s, want lockcheck's own", tags, got)
	}
	if got := ownTag(tags[:1]); got != tags[0] {
		t.Fatalf("ownTag of a lone tag = %s", got)
	}
}
