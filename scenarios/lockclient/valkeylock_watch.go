package lockclient

import (
	"context"
	"crypto/sha1"
	"encoding/hex"
	"strings"
	"sync"
	"time"

	"github.com/valkey-io/valkey-go"

	"github.com/lockcheck/lockcheck/history"
)

// valkeylock runs its lock commands as scripts on a client of its own,
// and some of them on its own, in the background: it renews the key every
// half validity, and gives the key back (its delete script) when a
// renewal fails or its context ends. The key lives by those renewals, not
// by the workload's calls, so the history must hold them: libWatch sees
// the scripts go out on the library's client and reports each renewal
// as an extend of the holder's, and each delete the library runs outside
// a Release as the holder's release (Config.Aside).
//
// The scripts are known by their text, as valkey-go v1.0.79's valkeylock
// has it (TestValkeylockLapseIsRecorded fails if they change).
var (
	vlAcquire = map[string]bool{
		scriptSHA(`local r = redis.call("SET",KEYS[1],ARGV[1],"NX","PX",ARGV[2]);redis.call("GET",KEYS[1]);return r`):   true,
		scriptSHA(`local r = redis.call("SET",KEYS[1],ARGV[1],"NX","PXAT",ARGV[2]);redis.call("GET",KEYS[1]);return r`): true,
	}
	vlExtend = scriptSHA(`if redis.call("GET",KEYS[1]) == ARGV[1] then local r = redis.call("PEXPIREAT",KEYS[1],ARGV[2]);redis.call("GET",KEYS[1]);return r end;return 0`)
	vlDelete = scriptSHA(`if redis.call("GET",KEYS[1]) == ARGV[1] then return redis.call("DEL",KEYS[1]) end;return 0`)
)

func scriptSHA(src string) string {
	sum := sha1.Sum([]byte(src))
	return hex.EncodeToString(sum[:])
}

// vlKeyPrefix is the name of valkeylock's only key for a lock named n
// (KeyMajority 1): vlKeyPrefix + n.
const vlKeyPrefix = "valkeylock:0:"

// libWatch follows one adapter's holds through the library's scripts.
type libWatch struct {
	clock  func() int64
	mu     sync.Mutex
	aside  func() func(*Aside) // Config.Aside
	closed bool                // the client closed: nothing more is reported
	// acq is the acquire in flight (one at a time: one worker per client).
	acq vlAcquireSeen
	// holds are the adapter's holds by the value the library stored.
	holds map[string]*vlHold
}

// vlAcquireSeen is what the library's acquire script did during one
// Acquire: the value it tried, when, and the delete that undid it.
type vlAcquireSeen struct {
	val  string
	call int64
	set  bool
	del  *Undo
}

// vlHold is one hold the adapter returned.
type vlHold struct {
	key, token string
	// ttl is the lease each renewal sets (the locker's validity).
	ttl time.Duration
	// releaseAt is when the adapter's Release began (0: it has not): a
	// delete called since is that call's own, and deleted is what it did
	// (nil: none ran).
	releaseAt int64
	deleted   *Result
}

func newLibWatch(cfg Config) *libWatch {
	return &libWatch{clock: cfg.Clock, aside: cfg.Aside, holds: map[string]*vlHold{}}
}

// beginAcquire starts watching an Acquire.
func (w *libWatch) beginAcquire() {
	w.mu.Lock()
	w.acq = vlAcquireSeen{}
	w.mu.Unlock()
}

// acquired is what the watched Acquire's scripts did.
func (w *libWatch) acquired() vlAcquireSeen {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.acq
}

// hold starts following the hold of value val, whose renewals set ttl.
func (w *libWatch) hold(val, key, token string, ttl time.Duration) {
	w.mu.Lock()
	w.holds[val] = &vlHold{key: key, token: token, ttl: ttl}
	w.mu.Unlock()
}

// release marks the hold of val as given up by the adapter's Release from
// now: a delete called since belongs to that call.
func (w *libWatch) release(val string) {
	w.mu.Lock()
	if h := w.holds[val]; h != nil {
		h.releaseAt = w.clock()
	}
	w.mu.Unlock()
}

// released ends following val and returns what its Release's delete did
// (nil: the library ran none, or it was reported aside).
func (w *libWatch) released(val string) *Result {
	w.mu.Lock()
	defer w.mu.Unlock()
	h := w.holds[val]
	delete(w.holds, val)
	if h == nil || h.releaseAt == 0 {
		return nil
	}
	return h.deleted
}

// close stops reporting: the run's history is taken.
func (w *libWatch) close() {
	w.mu.Lock()
	w.closed = true
	w.mu.Unlock()
}

// begin marks a script going out: the returned func takes what saw made
// of it (nil: nothing to report). Once the client closed, nothing is.
func (w *libWatch) begin() func(*Aside) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return func(*Aside) {}
	}
	return w.aside()
}

// saw takes one script the library ran: its SHA, the value it names,
// its times and its reply. It returns the command to record aside, if
// it is one: a renewal, or a delete outside the adapter's calls.
func (w *libWatch) saw(ctx context.Context, sha, val string, call, ret int64, resp valkey.ValkeyResult) *Aside {
	if e, ok := valkey.IsValkeyErr(resp.Error()); ok && e.IsNoScript() {
		return nil // not run: the library sends it again as EVAL
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	h := w.holds[val]
	switch {
	case vlAcquire[sha]:
		w.acq = vlAcquireSeen{val: val, call: call, set: resp.Error() == nil}
	case sha == vlDelete && h == nil && val == w.acq.val:
		w.acq.del = &Undo{Release: scriptResult(ctx, resp), Call: call, Return: ret}
	case h == nil:
	case sha == vlDelete && h.releaseAt != 0 && call >= h.releaseAt:
		r := scriptResult(ctx, resp)
		h.deleted = &r
	case sha == vlDelete:
		delete(w.holds, val)
		return &Aside{Kind: history.Release, Key: h.key, Token: h.token, Result: scriptResult(ctx, resp), Call: call, Return: ret}
	case sha == vlExtend:
		return &Aside{Kind: history.Extend, Key: h.key, Token: h.token, TTL: h.ttl, Result: scriptResult(ctx, resp), Call: call, Return: ret}
	}
	return nil
}

// scriptResult reads the reply of the renewal or delete script: 1 moved
// the lease or deleted the key, 0 found the key not its own, an error
// reply did nothing, no reply is unknown.
func scriptResult(ctx context.Context, resp valkey.ValkeyResult) Result {
	n, err := resp.AsInt64()
	switch {
	case err != nil:
		return resultOf(ctx, err)
	case n == 1:
		return okResult()
	}
	return failed("")
}

// watchedClient is the library's client, seen by a libWatch.
type watchedClient struct {
	valkey.Client
	w *libWatch
}

// Do runs one command; a script on a lock key is reported with its times.
func (c watchedClient) Do(ctx context.Context, cmd valkey.Completed) valkey.ValkeyResult {
	sha, val, ok := scriptCall(cmd.Commands())
	if !ok {
		return c.Client.Do(ctx, cmd)
	}
	end := c.w.begin()
	call := c.w.clock()
	resp := c.Client.Do(ctx, cmd)
	end(c.w.saw(ctx, sha, val, call, c.w.clock(), resp))
	return resp
}

// scriptCall reads EVALSHA sha 1 key val ... or EVAL src 1 key val ...
// on a valkeylock key: the script's SHA and the value it names.
func scriptCall(cmd []string) (sha, val string, ok bool) {
	if len(cmd) < 5 || cmd[2] != "1" || !strings.HasPrefix(cmd[3], vlKeyPrefix) {
		return "", "", false
	}
	switch strings.ToUpper(cmd[0]) {
	case "EVALSHA":
		sha = cmd[1]
	case "EVAL":
		sha = scriptSHA(cmd[1])
	default:
		return "", "", false
	}
	return sha, strings.Clone(cmd[4]), true
}
