package topology

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestParseOffset(t *testing.T) {
	cases := []struct {
		in   string
		want time.Duration
		ok   bool
	}{
		{"60000000000\n", time.Minute, true},
		{"  -5000000000", -5 * time.Second, true},
		{"+7", 7, true},
		{"0", 0, true},
		{"", 0, false},
		{"-", 0, false},
		{"abc", 0, false},
		{"12x", 12, true},
	}
	for _, c := range cases {
		got, ok := ParseOffset(c.in)
		if got != c.want || ok != c.ok {
			t.Errorf("ParseOffset(%q) = %v, %v; want %v, %v", c.in, got, ok, c.want, c.ok)
		}
	}
	for _, d := range []time.Duration{0, time.Hour, -90 * time.Second, 1} {
		if got, ok := ParseOffset(FormatOffset(d)); !ok || got != d {
			t.Errorf("round trip of %v gave %v", d, got)
		}
	}
}

// TestShimMovesWallClock compiles the real shim with a test offset file and
// runs date(1) under it: the wall clock moves by the file's offset, a bad
// file keeps the last good offset, and no file means no offset.
func TestShimMovesWallClock(t *testing.T) {
	if _, err := exec.LookPath("gcc"); err != nil {
		t.Skip("gcc is not installed: the shim cannot be compiled here")
	}
	dir := t.TempDir()
	offsetFile := filepath.Join(dir, "offset")
	src := filepath.Join(dir, "shim.c")
	lib := filepath.Join(dir, "shim.so")
	if err := os.WriteFile(src, shimSource, 0o644); err != nil {
		t.Fatal(err)
	}
	args := append([]string{`-DOFFSET_PATH="` + offsetFile + `"`}, ShimCompileArgs(src, lib)...)
	if out, err := exec.Command("gcc", args...).CombinedOutput(); err != nil {
		t.Fatalf("compile shim: %v\n%s", err, out)
	}
	if out, err := exec.Command("nm", "-u", lib).Output(); err == nil && strings.TrimSpace(string(out)) != "" {
		t.Errorf("the shim must not import any symbol, it imports:\n%s", out)
	}
	shifted := func() time.Duration {
		cmd := exec.Command("date", "+%s")
		cmd.Env = append(os.Environ(), "LD_PRELOAD="+lib)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("date under the shim: %v", err)
		}
		sec, _ := strconv.ParseInt(strings.TrimSpace(string(out)), 10, 64)
		return time.Duration(sec-time.Now().Unix()) * time.Second
	}
	near := func(got, want time.Duration) bool { return got > want-3*time.Second && got < want+3*time.Second }

	if got := shifted(); !near(got, 0) {
		t.Errorf("no offset file: clock moved by %v", got)
	}
	os.WriteFile(offsetFile, []byte(FormatOffset(time.Hour)+"\n"), 0o644)
	if got := shifted(); !near(got, time.Hour) {
		t.Errorf("offset +1h: clock moved by %v", got)
	}
	os.WriteFile(offsetFile, []byte(FormatOffset(-10*time.Minute)), 0o644)
	if got := shifted(); !near(got, -10*time.Minute) {
		t.Errorf("offset -10m: clock moved by %v", got)
	}
}
