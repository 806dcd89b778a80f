// Package fencedlock is a small lock library of the kind lockcheck's
// locktest package gates: a lease on one key with a fencing token drawn
// in the same transaction, extended and released only by the token that
// holds it (Valkey 9.0 and later: SET IFEQ, DELIFEQ). Copy its test
// (fencedlock_test.go) to gate your own library the same way.
package fencedlock

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/valkey-io/valkey-go"
)

// ErrTaken: another holder has the lock.
var ErrTaken = errors.New("fencedlock: the lock is taken")

// ErrLost: the lease ended (or another token holds the key) before the
// call; the holder must stop acting under the lock.
var ErrLost = errors.New("fencedlock: the lock was lost")

// Lock is one acquisition. Fence grows with every acquisition of the key:
// a resource that accepts only a fence above every one it has seen turns
// away a holder whose lease ended while it was paused.
type Lock struct {
	c     valkey.Client
	Key   string
	Token string
	Fence int64
}

// Acquire takes key for ttl, or returns ErrTaken.
func Acquire(ctx context.Context, c valkey.Client, key string, ttl time.Duration) (*Lock, error) {
	b := make([]byte, 16)
	rand.Read(b)
	token := hex.EncodeToString(b)
	resps := c.DoMulti(ctx,
		c.B().Multi().Build(),
		c.B().Set().Key(key).Value(token).Nx().PxMilliseconds(ttl.Milliseconds()).Build(),
		c.B().Incr().Key(fenceKey(key)).Build(),
		c.B().Exec().Build())
	exec, err := resps[3].ToArray()
	if err != nil {
		return nil, err
	}
	if len(exec) != 2 {
		return nil, fmt.Errorf("fencedlock: EXEC replied %d results", len(exec))
	}
	if err := exec[0].Error(); valkey.IsValkeyNil(err) {
		return nil, ErrTaken
	} else if err != nil {
		return nil, err
	}
	fence, err := exec[1].AsInt64()
	if err != nil {
		return nil, err
	}
	return &Lock{c: c, Key: key, Token: token, Fence: fence}, nil
}

// Resume is the lock that token holds on key, for a holder that knows its
// token but lost its Lock (a restart, an acquire whose reply was lost).
func Resume(c valkey.Client, key, token string) *Lock {
	return &Lock{c: c, Key: key, Token: token}
}

// Extend sets the lease to ttl from now, if the lock is still this one's.
func (l *Lock) Extend(ctx context.Context, ttl time.Duration) error {
	err := l.c.Do(ctx, l.c.B().Arbitrary("SET").Keys(l.Key).Args(l.Token, "IFEQ", l.Token, "PX", fmt.Sprint(ttl.Milliseconds())).Build()).Error()
	if valkey.IsValkeyNil(err) {
		return ErrLost
	}
	return err
}

// Release deletes the key if the lock is still this one's.
func (l *Lock) Release(ctx context.Context) error {
	n, err := l.c.Do(ctx, l.c.B().Arbitrary("DELIFEQ").Keys(l.Key).Args(l.Token).Build()).AsInt64()
	if err != nil {
		return err
	}
	if n == 0 {
		return ErrLost
	}
	return nil
}

// fenceKey is the key's fence counter, in the key's hash slot so that one
// transaction reaches both in a cluster.
func fenceKey(key string) string {
	if i := strings.IndexByte(key, '{'); i >= 0 {
		if j := strings.IndexByte(key[i+1:], '}'); j > 0 {
			return "fence:" + key[i:i+j+2]
		}
	}
	return "fence:{" + key + "}"
}
