//go:build cgo

package lockclient

import (
	"context"
	"fmt"
	"time"

	"github.com/valkey-io/valkey-glide/go/v2/constants"
	"github.com/valkey-io/valkey-glide/go/v2/models"
	"github.com/valkey-io/valkey-glide/go/v2/options"
)

// glideClient runs the native lock recipe through Valkey GLIDE's Go client,
// as the recipe is written for it: SetWithOptions with OnlyIfDoesNotExist
// and a PX expiry to acquire, with OnlyIfEquals(token) to extend, and
// CustomCommand DELIFEQ to release. The token is the value stored in the
// key, new for every acquisition; no state is kept per acquisition, as the
// library keeps none. GLIDE's Rust core owns the connections (reconnects,
// cluster redirects), so the client dials the addresses the topology hands
// to processes it cannot wrap (Config.AddrMap), as external adapters do.
type glideClient struct {
	name string
	cfg  Config
	set  func(ctx context.Context, key, value string, opts options.SetOptions) (models.Result[string], error)
	// custom runs a command whose reply is one value; the cluster client's
	// is routed by GLIDE as the command's key says.
	custom func(ctx context.Context, args []string) (any, error)
	close  func()
	// tap carries the connections when late replies are on (Config.Late).
	tap *tap
}

func (c *glideClient) Name() string { return c.name }

// glideCloseBound is how long Close waits for GLIDE's core to close.
// GLIDE v2.5.3's close_client can block for good, its core spinning,
// after a cluster primary restarted without its data (two report-card
// runs under restart-primary on the cluster, 2026-12-06): the run ends
// without it, and says so.
const glideCloseBound = 10 * time.Second

func (c *glideClient) Close() error {
	defer c.tap.close()
	done := make(chan struct{})
	go func() {
		defer close(done)
		c.close()
	}()
	select {
	case <-done:
		return nil
	case <-time.After(glideCloseBound):
		leftRunning.Add(1)
		return fmt.Errorf("GLIDE's Close did not return within %s: its core is left running in this process", glideCloseBound)
	}
}

// late arms the tap for the call's late reply, if it has one; the
// returned func disarms it.
func (c *glideClient) late(ctx context.Context) func() {
	h := holdOf(ctx)
	if h == nil || c.tap == nil {
		return func() {}
	}
	c.tap.hold(h)
	return c.tap.disarm
}

// px is an expiry in milliseconds, as the recipe writes it: GLIDE's
// NewExpiryIn would send EX for a TTL of whole seconds.
func px(ttl time.Duration) *options.Expiry {
	return &options.Expiry{Type: constants.Milliseconds, Duration: uint64(ttl.Milliseconds())}
}

func (c *glideClient) Acquire(ctx context.Context, key string, ttl time.Duration) Result {
	defer c.late(ctx)()
	ctx, cancel := WithTimeout(ctx, c.cfg.Timeout)
	defer cancel()
	token := newToken()
	r := c.setResult(ctx, key, token, options.NewSetOptions().SetOnlyIfDoesNotExist().SetExpiry(px(ttl)))
	r.Token = token // an unknown acquire may hold the lock with it
	return pauseAfter(ctx, r)
}

func (c *glideClient) Extend(ctx context.Context, key, token string, ttl time.Duration) Result {
	defer c.late(ctx)()
	ctx, cancel := WithTimeout(ctx, c.cfg.Timeout)
	defer cancel()
	return pauseAfter(ctx, c.setResult(ctx, key, token, options.NewSetOptions().SetOnlyIfEquals(token).SetExpiry(px(ttl))))
}

func (c *glideClient) Release(ctx context.Context, key, token string) Result {
	defer c.late(ctx)()
	ctx, cancel := WithTimeout(ctx, c.cfg.Timeout)
	defer cancel()
	v, err := c.custom(ctx, []string{"DELIFEQ", key, token})
	if err != nil {
		return c.result(ctx, err)
	}
	n, ok := v.(int64)
	if !ok {
		return unknownResult(fmt.Sprintf("GLIDE: DELIFEQ replied %v (%T), want an integer", v, v))
	}
	if n != 1 {
		return failed("")
	}
	return pauseAfter(ctx, okResult())
}

// setResult reads a conditional SET: OK when it took effect, nil (GLIDE's
// nil result) when its condition did not hold.
func (c *glideClient) setResult(ctx context.Context, key, value string, opts *options.SetOptions) Result {
	res, err := c.set(ctx, key, value, *opts)
	if err != nil {
		return c.result(ctx, err)
	}
	if res.IsNil() {
		return failed("")
	}
	return okResult()
}

var _ Client = (*glideClient)(nil)
