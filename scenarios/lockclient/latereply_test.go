package lockclient

import (
	"context"
	"errors"
	"io"
	"net"
	"os"
	"testing"
	"time"

	"github.com/lockcheck/lockcheck/history"
	"github.com/valkey-io/valkey-go"
)

// echoConn dials a loopback server that echoes what it reads, through l.
func echoConn(t *testing.T, l *LateReply) net.Conn {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() { io.Copy(c, c); c.Close() }()
		}
	}()
	c, err := l.Wrap(nil)(context.Background(), ln.Addr().String(), &net.Dialer{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func roundTrip(t *testing.T, c net.Conn, msg string) (string, error) {
	t.Helper()
	if _, err := c.Write([]byte(msg)); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 64)
	n, err := c.Read(buf)
	return string(buf[:n]), err
}

func TestLateReplyHeldPastItsHold(t *testing.T) {
	l := &LateReply{}
	c := echoConn(t, l)
	h := &Hold{Key: "lock:{k1}", For: 150 * time.Millisecond}
	l.Arm(h)
	began := time.Now()
	got, err := roundTrip(t, c, "SET lock:{k1} t NX")
	if err != nil || got != "SET lock:{k1} t NX" {
		t.Fatalf("read %q, %v", got, err)
	}
	if waited := time.Since(began); waited < h.For {
		t.Fatalf("the reply came after %v, before its hold of %v", waited, h.For)
	}
	if !h.Taken() {
		t.Fatal("the hold was not taken")
	}
	// taken once: the next reply is not held
	l.Arm(h)
	if got, err := roundTrip(t, c, "SET lock:{k1} t NX"); err != nil || got != "SET lock:{k1} t NX" {
		t.Fatalf("read %q, %v", got, err)
	}
}

func TestLateReplyOnlyForItsKey(t *testing.T) {
	l := &LateReply{}
	c := echoConn(t, l)
	h := &Hold{Key: "lock:{k1}", For: time.Hour}
	l.Arm(h)
	if got, err := roundTrip(t, c, "PING"); err != nil || got != "PING" {
		t.Fatalf("read %q, %v", got, err)
	}
	if h.Taken() {
		t.Fatal("a command without the key took the hold")
	}
	l.Disarm()
	if got, err := roundTrip(t, c, "GET lock:{k1}"); err != nil || got != "GET lock:{k1}" {
		t.Fatalf("read %q, %v", got, err)
	}
	if h.Taken() {
		t.Fatal("a disarmed hold was taken")
	}
}

// A read deadline that comes before the hold's end times the read out;
// the reply is then still on its way: a read after the deadline gets it
// at the hold's end, not before.
func TestLateReplyTimesOutAtTheReadDeadline(t *testing.T) {
	l := &LateReply{}
	c := echoConn(t, l)
	h := &Hold{Key: "k", For: 300 * time.Millisecond}
	l.Arm(h)
	began := time.Now()
	c.SetDeadline(began.Add(50 * time.Millisecond))
	_, err := roundTrip(t, c, "DELIFEQ k t")
	var ne net.Error
	if !errors.Is(err, os.ErrDeadlineExceeded) || !errors.As(err, &ne) || !ne.Timeout() {
		t.Fatalf("read error %v, want a timeout", err)
	}
	c.SetDeadline(time.Time{})
	buf := make([]byte, 64)
	n, err := c.Read(buf)
	if err != nil || string(buf[:n]) != "DELIFEQ k t" {
		t.Fatalf("next read %q, %v, want the held reply", buf[:n], err)
	}
	if waited := time.Since(began); waited < h.For {
		t.Fatalf("the held reply came after %v, before the hold's end (%v)", waited, h.For)
	}
}

// A deadline set while the reply is held (go-redis sets its read deadline
// after the write) is followed.
func TestLateReplyFollowsAMovedDeadline(t *testing.T) {
	l := &LateReply{}
	c := echoConn(t, l)
	l.Arm(&Hold{Key: "k", For: time.Hour})
	go func() {
		time.Sleep(50 * time.Millisecond)
		c.SetReadDeadline(time.Now().Add(20 * time.Millisecond))
	}()
	if _, err := roundTrip(t, c, "SET k t"); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("read error %v, want the moved deadline's timeout", err)
	}
}

// Wake ends a hold: a run that is over does not wait out its late replies.
func TestLateReplyWakes(t *testing.T) {
	l := &LateReply{}
	c := echoConn(t, l)
	wake := make(chan struct{})
	l.Arm(&Hold{Key: "k", For: time.Hour, Wake: wake})
	go func() { time.Sleep(20 * time.Millisecond); close(wake) }()
	if got, err := roundTrip(t, c, "SET k t"); err != nil || got != "SET k t" {
		t.Fatalf("read %q, %v", got, err)
	}
}

// Against a server: each client's call whose reply comes past its
// timeout takes effect (a late acquire left the lock taken, a late
// release deleted it), and the client reports it as unknown, or, where
// it retried (go-redis retries a timed-out command on a new connection),
// as what the retry found.
func TestLateReplyTakesEffect(t *testing.T) {
	topo := sharedStandalone(t, "valkey-9.1")
	raw := direct(t, topo)
	kinds := []string{"native", "fenced", "lua", "redislock", "redsync", "glide"}
	if py := pythonKindIfPresent(); py != "" {
		kinds = append(kinds, py)
	}
	for _, kind := range kinds {
		t.Run(kindLabel(kind), func(t *testing.T) {
			cfg := ConfigFor(topo)
			cfg.Timeout = 300 * time.Millisecond
			cfg.Late = &LateReply{}
			c := newTestClient(t, kind, cfg)
			key := "lock:{" + t.Name() + "}"
			late := func(call func(context.Context) Result) Result { return lateCall(t, cfg, key, call) }
			r, v := lateAcquire(t, cfg, c, raw, key)
			t.Logf("late acquire: %s (%q)", r.Outcome, r.Err)
			if r.Outcome == history.Fail || r.Outcome == history.OK && v != r.Token {
				t.Fatalf("late acquire: %s (%q), the key holds %q: want unknown, or ok with its token", r.Outcome, r.Err, v)
			}
			time.Sleep(3 * cfg.Timeout)
			if _, err := raw.Do(context.Background(), raw.B().Del().Key(key).Build()).AsInt64(); err != nil {
				t.Fatal(err)
			} // the held reply is delivered or dropped
			held := c.Acquire(context.Background(), key, 10*time.Second)
			if held.Outcome != history.OK {
				t.Fatalf("acquire: %s (%q)", held.Outcome, held.Err)
			}
			r = late(func(ctx context.Context) Result { return c.Release(ctx, key, held.Token) })
			t.Logf("late release: %s (%q)", r.Outcome, r.Err)
			if s, ok := lookup(kind); !ok || !s.library {
				if r.Outcome != history.Unknown {
					t.Fatalf("late release: %s, want unknown", r.Outcome)
				}
			}
			awaitGone(t, raw, key)
		})
	}
}

// lateCall runs call with the reply to its first command on key held
// back 3 call timeouts, and fails t unless the call waited out its
// timeout and a command took the hold.
func lateCall(t *testing.T, cfg Config, key string, call func(context.Context) Result) Result {
	t.Helper()
	h := &Hold{Key: key, For: 3 * cfg.Timeout}
	cfg.Late.Arm(h)
	defer cfg.Late.Disarm()
	began := time.Now()
	r := call(WithHold(context.Background(), h))
	if took := time.Since(began); took < cfg.Timeout {
		t.Fatalf("the call returned after %v, before its timeout (%v)", took, cfg.Timeout)
	}
	if !h.Taken() {
		t.Fatal("no command took the hold")
	}
	return r
}

// lateAcquire loads c's scripts, then acquires key with its reply late,
// and returns what c said and the token the key holds, failing t when the
// acquire did not take the key.
func lateAcquire(t *testing.T, cfg Config, c Client, raw valkey.Client, key string) (Result, string) {
	t.Helper()
	loadScripts(t, c, key)
	r := lateCall(t, cfg, key, func(ctx context.Context) Result { return c.Acquire(ctx, key, 10*time.Second) })
	v, ok := get(t, raw, key)
	if !ok {
		t.Fatal("the late acquire's SET did not take the key")
	}
	return r, v
}

// loadScripts takes and gives back key once, which loads a library's
// scripts, so that a late command is the lock's, not an EVALSHA answered
// NOSCRIPT.
func loadScripts(t *testing.T, c Client, key string) {
	t.Helper()
	if w := c.Acquire(context.Background(), key, 10*time.Second); w.Outcome != history.OK {
		t.Fatalf("acquire: %s (%q)", w.Outcome, w.Err)
	} else if r := c.Release(context.Background(), key, w.Token); r.Outcome != history.OK {
		t.Fatalf("release: %s (%q)", r.Outcome, r.Err)
	}
}

// redsync bounds each node's SET NX by 5% of the TTL and, past it, runs
// its delete script before the acquire returns: the acquire reports the
// release it ran (Undo), so that the history shows the lock taken and
// given back.
func TestRedsyncUndoesALateAcquire(t *testing.T) {
	topo := sharedStandalone(t, "valkey-9.1")
	raw := direct(t, topo)
	cfg := ConfigFor(topo)
	cfg.Timeout = time.Second
	cfg.Late = &LateReply{}
	c := newTestClient(t, "redsync", cfg)
	key := "lock:{" + t.Name() + "}"
	h := &Hold{Key: key, For: 2 * time.Second}
	cfg.Late.Arm(h)
	r := c.Acquire(context.Background(), key, 2*time.Second) // 100 ms per node
	cfg.Late.Disarm()
	if !h.Taken() {
		t.Fatal("no command took the hold")
	}
	if r.Undo == nil || r.Undo.Release.Outcome != history.OK || r.Outcome != history.Fail {
		t.Fatalf("late acquire: %s (%q), undo %+v: want fail with the release redsync ran", r.Outcome, r.Err, r.Undo)
	}
	if r.Token == "" || r.Undo.Call > r.Undo.Return {
		t.Fatalf("undo without a token or with its times reversed: %+v", r)
	}
	awaitGone(t, raw, key)
}
