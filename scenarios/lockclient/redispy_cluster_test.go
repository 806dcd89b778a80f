package lockclient

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/lockcheck/lockcheck/history"
	"github.com/valkey-io/valkey-go"
)

// testPythonLateReplyOnCluster drives on purpose what the report card
// found in redis-py's Lock on a cluster (docs/report-card.md, "redis-py's
// Lock on a cluster"): an acquire whose SET NX takes the key while its
// reply comes after the client's socket timeout. redis-py 4.3.4's
// RedisCluster sends the SET again 0.25 s later; the copy finds the key
// its first copy took and answers nil, so Lock.acquire returns False for
// a lock it holds, and nobody holds it until its lease ends. A release
// whose reply is late is sent again the same way: the copy finds the key
// its first copy deleted, and Lock.release raises LockNotOwnedError for
// a lock it released. The adapter's own native mode stops that resend
// (SentOnce) and answers unknown, naming the token the key holds. The
// interleaving is the test's: the reply to the first command naming the
// key is held 3 call timeouts.
//
// Should redis-py stop sending a command whose reply it lost, or its Lock
// check the key after a nil, the lock mode's case fails: the finding is
// then gone.
func testPythonLateReplyOnCluster(t *testing.T, cfg Config, raw valkey.Client) {
	cfg.Timeout = 300 * time.Millisecond
	for _, c := range []struct {
		mode       string
		want       history.Outcome
		releaseErr string
	}{
		{"native", history.Unknown, "ReplyLost"},
		{"lock", history.Fail, "LockNotOwnedError"},
	} {
		t.Run(c.mode, func(t *testing.T) {
			cfg := cfg
			cfg.Late = &LateReply{}
			cfg.StderrDir = t.TempDir()
			cl := newTestClient(t, pythonAdapter(t, "--mode", c.mode), cfg)
			key := "lock:{late-" + c.mode + "}"
			r, v := lateAcquire(t, cfg, cl, raw, key)
			t.Logf("late acquire: %s (%q); the key holds %.8s", r.Outcome, r.Err, v)
			if r.Outcome != c.want {
				t.Fatalf("late acquire: %s (%q), want %s", r.Outcome, r.Err, c.want)
			}
			switch c.mode {
			case "native":
				if r.Token != v || !strings.Contains(r.Err, "ReplyLost") {
					t.Fatalf("unknown acquire named token %q (%q), the key holds %q", r.Token, r.Err, v)
				}
			case "lock":
				// Reported refused, yet the key holds a token no one was
				// given, for the whole lease.
				if ttl := pttl(t, raw, key); ttl < 5000 {
					t.Fatalf("the key's lease is %d ms, want most of 10 s left", ttl)
				}
			}
			time.Sleep(3 * cfg.Timeout) // the held reply is delivered or dropped
			if _, err := raw.Do(context.Background(), raw.B().Del().Key(key).Build()).AsInt64(); err != nil {
				t.Fatal(err)
			}

			held := cl.Acquire(context.Background(), key, 10*time.Second)
			if held.Outcome != history.OK {
				t.Fatalf("acquire: %s (%q)", held.Outcome, held.Err)
			}
			r = lateCall(t, cfg, key, func(ctx context.Context) Result { return cl.Release(ctx, key, held.Token) })
			t.Logf("late release: %s (%q)", r.Outcome, r.Err)
			if _, still := get(t, raw, key); still {
				t.Fatal("the late release's delete did not take effect")
			}
			if want := map[string]history.Outcome{"native": history.Unknown, "lock": history.Fail}[c.mode]; r.Outcome != want || !strings.Contains(r.Err, c.releaseErr) {
				t.Fatalf("late release: %s (%q), want %s with %s", r.Outcome, r.Err, want, c.releaseErr)
			}
		})
	}
}
