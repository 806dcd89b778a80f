package scenarios

import (
	"context"
	"strings"
	"time"

	"github.com/lockcheck/lockcheck/history"
	"github.com/lockcheck/lockcheck/scenarios/lockclient"
)

// drawsFences says whether the run's client draws fences: a built-in kind
// says so itself; an external adapter is asked by one acquire and release
// on a key of its own before the run (the protocol adds "fence" to every
// acquire of an adapter that draws them), so that a fenced library in
// another language is judged as the built-in fenced client is: its
// writes carry fences and two holders under a fault are allowed if the
// fence stops the stale one.
func drawsFences(ctx context.Context, kind string, c lockclient.Client, key string) bool {
	if !strings.HasPrefix(kind, lockclient.ExternalPrefix) {
		return lockclient.DrawsFences(kind)
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	probe := "lockcheck:fence-probe:{" + key + "}"
	r := c.Acquire(ctx, probe, 5*time.Second)
	if r.Outcome == history.OK {
		c.Release(ctx, probe, r.Token)
	}
	return r.Outcome == history.OK && r.HasFence
}
