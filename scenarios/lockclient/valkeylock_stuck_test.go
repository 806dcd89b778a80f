package lockclient

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/valkey-io/valkey-go"
	"github.com/valkey-io/valkey-go/valkeylock"
)

// TestValkeylockRenewalStuckPastExpiry drives on purpose the double
// holder the migrations table found valkeylock in while a slot changed
// owner (docs/migrations.md): the holder's renewal is held on its way to
// the server past the moment its key expires, another client takes the
// free key, and the holder's context stays live, telling it nothing,
// until the stuck renewal ends. valkeylock runs a renewal under the
// deadline it asks for (now + KeyValidity), not the key's current
// expiry, so a renewal may stall up to ExtendInterval past it. The
// interleaving is the test's, not the machine's: the renewal is held
// 2 s from when it goes out (about 1 s after the acquire), the key
// expires 2 s after the acquire, and the other client tries every 20 ms
// from 1.5 s on. Should valkeylock bound its renewals by the key's
// expiry, this fails at its first check: the finding is then gone.
func TestValkeylockRenewalStuckPastExpiry(t *testing.T) {
	topo := sharedStandalone(t, "valkey-9.1")
	validity := 2 * time.Second
	name := "stuck-renewal"
	key := []byte("valkeylock:0:" + name)
	hold := &writeHold{key: key, d: 2 * time.Second}
	opt := topo.ClientOption()
	dial := opt.DialCtxFn
	opt.DialCtxFn = func(ctx context.Context, addr string, d *net.Dialer, cfg *tls.Config) (net.Conn, error) {
		c, err := dial(ctx, addr, d, cfg)
		if err != nil {
			return nil, err
		}
		return &heldConn{Conn: c, hold: hold}, nil
	}
	newLocker := func(o valkey.ClientOption) valkeylock.Locker {
		l, err := valkeylock.NewLocker(valkeylock.LockerOption{ClientOption: o, KeyValidity: validity, KeyMajority: 1, TryNextAfter: time.Second})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(l.Close)
		return l
	}
	holder, other := newLocker(opt), newLocker(topo.ClientOption())
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()

	held, release, err := holder.TryWithContext(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	acquired := time.Now()
	hold.armed.Store(true) // the holder's next command on its key: the renewal

	time.Sleep(validity * 3 / 4)
	var took time.Time
	for took.IsZero() && time.Since(acquired) < validity*3/2 {
		_, cancelOther, err := other.TryWithContext(ctx, name)
		switch {
		case err == nil:
			took = time.Now()
			defer cancelOther()
		case errors.Is(err, valkeylock.ErrNotLocked):
			time.Sleep(20 * time.Millisecond)
		default:
			t.Fatal(err)
		}
	}
	if took.IsZero() {
		t.Fatalf("the other client never took the key in the %s after the holder's expired", validity/2)
	}
	if !hold.took.Load() {
		t.Fatal("the holder's renewal never went out: nothing was held")
	}
	if err := held.Err(); err != nil {
		t.Fatalf("the holder's context ended (%v) before the other client took the key %s after the acquire: valkeylock no longer lets a stuck renewal outlive its key", err, took.Sub(acquired).Round(time.Millisecond))
	}
	t.Logf("the other client took the key %s after the holder's acquire, the holder's context still live", took.Sub(acquired).Round(time.Millisecond))
	// the renewal lands (or times out) about 3 s after the acquire, finds
	// the key gone or the other's, and the holder learns it then
	select {
	case <-held.Done():
		t.Logf("the holder's context ended %s after the other took the key", time.Since(took).Round(time.Millisecond))
	case <-time.After(3 * validity):
		t.Fatalf("the holder's context still live %s after the other client took the key", 3*validity)
	}
}

// writeHold holds back, once armed, the first write that names key, for
// d before it goes out: a command delayed on its way to the server (its
// effect comes late), unlike LateReply, which holds back a reply (its
// effect came in time).
type writeHold struct {
	key   []byte
	d     time.Duration
	armed atomic.Bool
	took  atomic.Bool
}

// heldConn is a connection whose writes pass through a writeHold.
type heldConn struct {
	net.Conn
	hold *writeHold
}

func (c *heldConn) Write(p []byte) (int, error) {
	if bytes.Contains(p, c.hold.key) && c.hold.armed.CompareAndSwap(true, false) {
		c.hold.took.Store(true)
		time.Sleep(c.hold.d)
	}
	return c.Conn.Write(p)
}
