package lockclient

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/lockcheck/lockcheck/history"
)

// TestPauseAfterOnlyOnSuccess: a one-command step's pause is taken once
// the server said OK, never after a refusal (the acquire's next attempt
// carries it), and only once.
func TestPauseAfterOnlyOnSuccess(t *testing.T) {
	p := &Pause{For: 50 * time.Millisecond}
	ctx := WithPause(context.Background(), p)
	pauseAfter(ctx, failed(""))
	if p.taken.Load() {
		t.Fatal("a refused call took the pause")
	}
	begin := time.Now()
	pauseAfter(ctx, okResult())
	if !p.taken.Load() || time.Since(begin) < p.For {
		t.Fatalf("an OK call: taken %v after %v, want taken after at least %v", p.taken.Load(), time.Since(begin), p.For)
	}
	begin = time.Now()
	pauseAfter(ctx, okResult())
	if time.Since(begin) >= p.For {
		t.Fatal("the pause was taken twice")
	}
}

// TestPauseInsideOutlivesTheDeadline: a frozen client does not notice its
// deadline pass; the command after the pause gets a deadline of its own.
func TestPauseInsideOutlivesTheDeadline(t *testing.T) {
	p := &Pause{For: 80 * time.Millisecond}
	ctx, cancel := context.WithTimeout(WithPause(context.Background(), p), 20*time.Millisecond)
	defer cancel()
	var hooked bool
	cfg := Config{Timeout: time.Second, MidOp: func(context.Context, string) { hooked = true }}
	begin := time.Now()
	next, done := pauseInside(ctx, cfg, "k")
	defer done()
	if time.Since(begin) < p.For || !hooked {
		t.Fatalf("paused %v (want at least %v), hook called %v", time.Since(begin), p.For, hooked)
	}
	if next.Err() != nil {
		t.Fatalf("the next command's context: %v, want a deadline of its own", next.Err())
	}
}

// TestExternalFrozenMidRequest: an adapter is stopped while a request is
// outstanding and continued after the pause; the call waits for it (the
// deadline grows by the pause) and reports the adapter's answer. The
// adapter answers 50 ms after the request, so at least 750 ms after it
// with the pause: past the deadline without the pause (600 ms, whatever
// the machine's load), and 550 ms within the grown one (1.3 s), which a
// loaded machine's scheduling delays do not use up.
func TestExternalFrozenMidRequest(t *testing.T) {
	dir := t.TempDir()
	script := filepath.Join(dir, "slow.sh")
	body := "#!/bin/sh\nread l\necho '{\"status\":\"ok\",\"name\":\"slow\"}'\nwhile read l; do sleep 0.05; echo '{\"status\":\"ok\",\"token\":\"t1\"}'; done\n"
	if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	c, err := NewClient(ExternalPrefix+script, Config{StderrDir: dir, Timeout: 100 * time.Millisecond, AdapterGrace: 500 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	p := &Pause{For: 700 * time.Millisecond}
	begin := time.Now()
	r := c.Acquire(WithPause(context.Background(), p), "k", time.Second)
	took := time.Since(begin)
	if r.Outcome != history.OK || r.Token != "t1" {
		t.Fatalf("acquire %+v, want ok with t1: the deadline did not grow by the pause", r)
	}
	if !p.taken.Load() || took < p.For+50*time.Millisecond {
		t.Fatalf("taken %v, call took %v: want the adapter frozen %v on top of its 50 ms", p.taken.Load(), took, p.For)
	}
}

// TestExternalStoppedAfterItsCommand: a pause stops an adapter right after
// its command reached the server, through its tap: the release has taken
// effect on the server while the call is still frozen, and the call
// returns the adapter's answer after the pause.
func TestExternalStoppedAfterItsCommand(t *testing.T) {
	topo := sharedStandalone(t, "valkey-9.1")
	raw := direct(t, topo)
	cfg := ConfigFor(topo)
	cfg.StderrDir = t.TempDir()
	c := newTestClient(t, ExternalPrefix+"/usr/bin/python3 ../../adapters/python/redis_py_adapter.py", cfg)
	ctx := context.Background()
	const key = "lock:{tap}"
	a := c.Acquire(ctx, key, 10*time.Second)
	if a.Outcome != history.OK {
		t.Fatalf("acquire: %+v", a)
	}
	// The pause is long and the checks compare the moment the key went
	// with the moment the call returned, so a loaded machine that is slow
	// to run the adapter cannot fail it: were the pause taken before the
	// command, the key would go just before the call returned.
	p := &Pause{For: 3 * time.Second}
	done := make(chan Result, 1)
	begin := time.Now()
	go func() { done <- c.Release(WithPause(ctx, p), key, a.Token) }()
	deadline := time.Now().Add(time.Minute)
	for pttl(t, raw, key) != -2 {
		if time.Now().After(deadline) {
			t.Fatal("the release did not reach the server within a minute of its call")
		}
		time.Sleep(5 * time.Millisecond)
	}
	gone := time.Now()
	r := <-done
	if r.Outcome != history.OK || !p.Taken() || time.Since(begin) < p.For {
		t.Fatalf("release %+v after %v, pause taken %v: want ok after the %v pause", r, time.Since(begin), p.Taken(), p.For)
	}
	if frozen := time.Since(gone); frozen < p.For/2 {
		t.Fatalf("the call returned %v after the key went, want at least %v: the pause was not taken after the command", frozen, p.For/2)
	}
}
