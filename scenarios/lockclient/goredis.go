package lockclient

import (
	"context"
	"net"

	goredis "github.com/redis/go-redis/v9"

	"github.com/lockcheck/lockcheck/topology"
)

// newGoRedis builds the go-redis client that redislock runs on, following
// the same topology as cfg.Option and dialing through its dialer, which
// maps the addresses nodes announce (Sentinel replies, MOVED) to host
// ports. Its retries stay at go-redis's defaults: the adapter tests the
// library as users run it.
func newGoRedis(cfg Config) goredis.UniversalClient {
	dial := func(ctx context.Context, network, addr string) (net.Conn, error) {
		d := &net.Dialer{Timeout: cfg.Timeout}
		if cfg.Option.DialCtxFn != nil {
			return cfg.Option.DialCtxFn(ctx, addr, d, nil)
		}
		return d.DialContext(ctx, network, addr)
	}
	addrs := cfg.Option.InitAddress
	if len(addrs) == 0 {
		addrs = cfg.Addrs
	}
	switch cfg.Topology {
	case topology.Sentinel:
		master := cfg.MasterSet
		if master == "" {
			master = cfg.Option.Sentinel.MasterSet
		}
		return goredis.NewFailoverClient(&goredis.FailoverOptions{
			MasterName: master, SentinelAddrs: addrs, Dialer: dial,
			ReadTimeout: cfg.Timeout, WriteTimeout: cfg.Timeout, ContextTimeoutEnabled: true,
		})
	case topology.Cluster:
		return goredis.NewClusterClient(&goredis.ClusterOptions{
			Addrs: addrs, Dialer: dial,
			ReadTimeout: cfg.Timeout, WriteTimeout: cfg.Timeout, ContextTimeoutEnabled: true,
		})
	}
	return goredis.NewClient(&goredis.Options{
		Addr: addrs[0], Dialer: dial,
		ReadTimeout: cfg.Timeout, WriteTimeout: cfg.Timeout, ContextTimeoutEnabled: true,
	})
}
