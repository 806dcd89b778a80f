package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestOfflineExample: the run folder the README's first screen points a
// newcomer to (examples/failover-race: a real Sentinel kill-primary run,
// shrunk to its three operations) is checked, explained and drawn with no
// Docker engine: the verdict VIOLATED (exit 1), the why line naming the
// two holders and the failover, and report.html written.
func TestOfflineExample(t *testing.T) {
	t.Setenv("DOCKER_HOST", "unix:///nonexistent/docker.sock")
	dir := t.TempDir()
	b, err := os.ReadFile(filepath.Join("..", "..", "examples", "failover-race", "history.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "history.json"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	if code := run([]string{"check", dir}, &stdout, &stderr); code != 1 {
		t.Fatalf("exit %d, want 1 (violated); stderr %s", code, stderr.String())
	}
	out := stdout.String()
	for _, want := range []string{"why double_holder: Worker 0 held lock:{k1}", "kill-primary on n0", "verdict: VIOLATED"} {
		if !strings.Contains(out, want) {
			t.Fatalf("output lacks %q:\n%s", want, out)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "report.html")); err != nil {
		t.Fatalf("no report: %v", err)
	}
}
