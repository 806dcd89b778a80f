package lockclient

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/lockcheck/lockcheck/history"
	"github.com/valkey-io/valkey-go"
)

// testPythonLateAcquireOnCluster drives on purpose what the report card
// found in redis-py's Lock on a cluster (docs/report-card.md, "redis-py's
// Lock on a cluster"): an acquire whose SET NX takes the key while its
// reply comes after the client's socket timeout. redis-py 4.3.4's
// RedisCluster sends the SET again 0.25 s later; the copy finds the key
// its first copy took and answers nil, so Lock.acquire returns False for
// a lock it holds, and nobody holds it until its lease ends. The adapter's
// own native mode stops that resend (SentOnce) and answers unknown with
// the token the key holds. The interleaving is the test's: the reply to
// the first command naming the key is held 3 call timeouts.
//
// Should redis-py stop sending a command whose reply it lost, or its Lock
// check the key after a nil, the lock mode's case fails: the finding is
// then gone.
func testPythonLateAcquireOnCluster(t *testing.T, cfg Config, raw valkey.Client) {
	cfg.Timeout = 300 * time.Millisecond
	for _, c := range []struct {
		mode string
		want history.Outcome
	}{
		{"native", history.Unknown},
		{"lock", history.Fail},
	} {
		t.Run(c.mode, func(t *testing.T) {
			cfg := cfg
			cfg.Late = &LateReply{}
			cfg.StderrDir = t.TempDir()
			cl := newTestClient(t, pythonAdapter(t, "--mode", c.mode), cfg)
			key := "lock:{late-" + c.mode + "}"
			h := &Hold{Key: key, For: 3 * cfg.Timeout}
			cfg.Late.Arm(h)
			r := cl.Acquire(WithHold(context.Background(), h), key, 10*time.Second)
			cfg.Late.Disarm()
			if !h.Taken() {
				t.Fatal("no command took the hold")
			}
			v, held := get(t, raw, key)
			if !held {
				t.Fatal("the late acquire's SET did not take the key")
			}
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
			if _, err := raw.Do(context.Background(), raw.B().Del().Key(key).Build()).AsInt64(); err != nil {
				t.Fatal(err)
			}
		})
	}
}
