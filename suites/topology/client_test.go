package topology_test

import (
	"time"

	"github.com/valkey-io/valkey-go"

	"github.com/lockcheck/lockcheck/topology"
)

// valkeyClient is a client that follows the topology across failovers and
// redirects, with short timeouts so a dead primary shows up quickly.
func valkeyClient(t *topology.Topology) (valkey.Client, error) {
	opt := t.ClientOption()
	opt.ConnWriteTimeout = 2 * time.Second
	opt.Dialer.Timeout = time.Second
	return valkey.NewClient(opt)
}
