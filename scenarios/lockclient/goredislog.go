package lockclient

import (
	"context"

	goredis "github.com/redis/go-redis/v9"
)

// go-redis logs its Sentinel discovery and its reconnects to the
// process's stderr, under lockcheck's own progress line and into the
// measurements' output, once per pool and failover; what a library does
// that matters to a lock is in the history, so its chatter is dropped.
func init() { goredis.SetLogger(quiet{}) }

type quiet struct{}

func (quiet) Printf(context.Context, string, ...any) {}
