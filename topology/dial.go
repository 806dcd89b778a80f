package topology

import (
	"context"
	"crypto/tls"
	"net"
	"sync"
)

// addrMap translates the addresses nodes announce to each other (container
// IP and port, as Sentinel replies and MOVED redirects name them) into the
// ports mapped on the host's loopback. Clients dial through it, so they
// follow failovers and redirects with no announce settings on the servers,
// whose own links keep using the container network.
type addrMap struct {
	mu sync.RWMutex
	m  map[string]string
}

func newAddrMap() *addrMap { return &addrMap{m: map[string]string{}} }

func (a *addrMap) set(internal, external string) {
	a.mu.Lock()
	a.m[internal] = external
	a.mu.Unlock()
}

func (a *addrMap) resolve(addr string) string {
	a.mu.RLock()
	defer a.mu.RUnlock()
	if ext, ok := a.m[addr]; ok {
		return ext
	}
	return addr
}

// dial is a valkey-go DialCtxFn.
func (a *addrMap) dial(ctx context.Context, addr string, d *net.Dialer, cfg *tls.Config) (net.Conn, error) {
	addr = a.resolve(addr)
	if cfg != nil {
		td := tls.Dialer{NetDialer: d, Config: cfg}
		return td.DialContext(ctx, "tcp", addr)
	}
	return d.DialContext(ctx, "tcp", addr)
}
