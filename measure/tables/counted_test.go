package tables

import (
	"os"
	"path/filepath"
	"testing"
)

// A run's folder kept whole (the evidence of a Close that did not return)
// outlives drop, with what it held; a folder not kept is removed.
func TestKeptFolderOutlivesDrop(t *testing.T) {
	out := t.TempDir()
	scratch := func() *counted {
		dir, err := os.MkdirTemp(out, ".run-")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "run.log"), []byte("close did not return\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		return &counted{dir: dir}
	}
	logf := func(format string, args ...any) { t.Logf(format, args...) }

	kept := scratch()
	from := kept.dir
	kept.keepFolder(out, filepath.Join(leftRunningDir, "cluster_kill-primary-glide-seed10"), logf)
	kept.drop()
	b, err := os.ReadFile(filepath.Join(out, leftRunningDir, "cluster_kill-primary-glide-seed10", "run.log"))
	if err != nil || string(b) != "close did not return\n" {
		t.Fatalf("kept folder's log: %q, %v", b, err)
	}
	if _, err := os.Stat(from); !os.IsNotExist(err) {
		t.Errorf("the scratch folder %s is still there after it was kept: %v", from, err)
	}

	dropped := scratch()
	dropped.drop()
	if _, err := os.Stat(dropped.dir); !os.IsNotExist(err) {
		t.Errorf("a folder not kept outlived drop: %v", err)
	}
}
