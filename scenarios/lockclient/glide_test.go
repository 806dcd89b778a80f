//go:build cgo

package lockclient

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	glide "github.com/valkey-io/valkey-glide/go/v2"

	"github.com/lockcheck/lockcheck/history"
)

// TestGlideResult reads GLIDE's errors as its core writes them (the texts
// are what valkey-9.1 made GLIDE v2.5.3 return): a server's error reply is
// a definite failure; a timeout, a broken or closed connection, and any
// error GLIDE gives no server code for, may have run.
func TestGlideResult(t *testing.T) {
	c := &glideClient{cfg: Config{}.WithDefaults()}
	for _, tc := range []struct {
		err  error
		want history.Outcome
	}{
		{errors.New("An error was signalled by the server: - ResponseError: unknown command 'DELIFEQ', with args beginning with: 'k' 'tok'"), history.Fail},
		{errors.New("WRONGTYPE: Operation against a key holding the wrong kind of value"), history.Fail},
		{glide.NewTimeoutError("timed out"), history.Unknown},
		{glide.NewDisconnectError("connection reset"), history.Unknown},
		{glide.NewClosingError("executeCommand failed: the client is closed"), history.Unknown},
		{context.DeadlineExceeded, history.Unknown},
		{errors.New("Failed to send the request"), history.Unknown},
	} {
		if r := c.result(context.Background(), tc.err); r.Outcome != tc.want {
			t.Errorf("%q: %s, want %s", tc.err, r.Outcome, tc.want)
		}
	}
}

// TestGlideDialsAddrMap shows GLIDE's connections going where
// Config.AddrMap sends the address a node announces, as the network faults'
// proxies need: mapped to a closed port, the client cannot connect.
func TestGlideDialsAddrMap(t *testing.T) {
	topo := sharedStandalone(t, "valkey-9.1")
	cfg := ConfigFor(topo)
	cfg.Timeout = 500 * time.Millisecond
	cfg.AddrMap = map[string]string{topo.Servers()[0].Internal(): "127.0.0.1:1"}
	c, err := NewClient("glide", cfg)
	if err == nil {
		c.Close()
		t.Fatal("connected with the node's address mapped to a closed port: GLIDE did not ask the map")
	}
	if !strings.Contains(err.Error(), "127.0.0.1:1") {
		t.Fatalf("the error does not name the mapped address: %v", err)
	}
}
