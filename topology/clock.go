package topology

import (
	"bytes"
	"context"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
)

//go:embed clockshim/clockshim.c
var shimSource []byte

var (
	shimOnce sync.Once
	shimLib  []byte
	shimErr  error
)

// ClockShim compiles the clock shim once per source version and caches the
// library in the user's cache folder. It needs gcc on the host.
func ClockShim() ([]byte, error) {
	shimOnce.Do(func() { shimLib, shimErr = compileShim() })
	return shimLib, shimErr
}

func compileShim() ([]byte, error) {
	sum := sha256.Sum256(shimSource)
	dir, err := os.UserCacheDir()
	if err != nil {
		dir = os.TempDir()
	}
	dir = filepath.Join(dir, "lockcheck")
	lib := filepath.Join(dir, "clockshim-"+hex.EncodeToString(sum[:6])+".so")
	if b, err := os.ReadFile(lib); err == nil {
		return b, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("clock shim: %w", err)
	}
	cc := os.Getenv("CC")
	if cc == "" {
		cc = "gcc"
	}
	if _, err := exec.LookPath(cc); err != nil {
		return nil, fmt.Errorf("clock shim: no C compiler (%s): apt-get install gcc, or start with Options.NoClockShim", cc)
	}
	src := lib + ".c"
	if err := os.WriteFile(src, shimSource, 0o644); err != nil {
		return nil, fmt.Errorf("clock shim: %w", err)
	}
	defer os.Remove(src)
	tmp := lib + ".tmp"
	var stderr bytes.Buffer
	cmd := exec.Command(cc, ShimCompileArgs(src, tmp)...)
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("clock shim: %s failed: %v: %s", cc, err, strings.TrimSpace(stderr.String()))
	}
	if err := os.Rename(tmp, lib); err != nil {
		return nil, fmt.Errorf("clock shim: %w", err)
	}
	return os.ReadFile(lib)
}

// ShimCompileArgs is the compiler's command line: a freestanding shared
// object that links no libc at all.
func ShimCompileArgs(src, out string) []string {
	return []string{"-shared", "-fPIC", "-nostdlib", "-ffreestanding", "-fno-stack-protector", "-O2", "-o", out, src}
}

// FormatOffset renders a clock offset as the shim reads it: signed
// nanoseconds in decimal.
func FormatOffset(d time.Duration) string { return strconv.FormatInt(int64(d), 10) }

// ParseOffset reads an offset as the shim does: optional blanks, an
// optional sign, decimal digits; the rest of the line is ignored. ok is
// false when there are no digits, and the shim then keeps its last offset.
func ParseOffset(s string) (d time.Duration, ok bool) {
	s = strings.TrimLeft(s, " \t")
	neg := false
	if s != "" && (s[0] == '-' || s[0] == '+') {
		neg = s[0] == '-'
		s = s[1:]
	}
	var v int64
	digits := 0
	for ; digits < len(s) && s[digits] >= '0' && s[digits] <= '9'; digits++ {
		v = v*10 + int64(s[digits]-'0')
	}
	if digits == 0 {
		return 0, false
	}
	if neg {
		v = -v
	}
	return time.Duration(v), true
}

// SetClockOffset moves the node's wall clock by d from the true time, with
// no restart: the shim in the server re-reads the offset file within a few
// milliseconds. The file is replaced atomically.
func (n *Node) SetClockOffset(ctx context.Context, d time.Duration) error {
	if n.topo.shim == nil {
		return fmt.Errorf("set clock on %s: the topology started without the clock shim", n.Name)
	}
	script := fmt.Sprintf("printf '%%s\\n' %s > %s.tmp && mv %s.tmp %s", FormatOffset(d), clockFile, clockFile, clockFile)
	if err := n.exec(ctx, "sh", "-c", script); err != nil {
		return fmt.Errorf("set clock on %s: %w", n.Name, err)
	}
	// The shim re-reads the file every 5 ms of its own time.
	select {
	case <-time.After(20 * time.Millisecond):
	case <-ctx.Done():
		return ctx.Err()
	}
	return nil
}
