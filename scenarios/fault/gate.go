package fault

import (
	"context"
	"sync"
)

// Gate holds back the workload's acquire attempts while a fault arranges
// the moment the next lock is taken: kill-primary shuts it until the key
// is free on the primary and its replicas alike, cuts replication, and
// opens it, so that the next lock exists on the primary alone and nothing
// the replicas hold keeps it taken after the failover. A held-back worker
// has not called yet: to the history it is a worker that waited longer
// before its attempt, as any client may.
type Gate struct {
	mu   sync.Mutex
	open chan struct{} // nil while open; closed when the gate opens
}

// NewGate makes an open Gate.
func NewGate() *Gate { return &Gate{} }

// shut holds back every acquire attempt from now on.
func (g *Gate) shut() {
	if g == nil {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.open == nil {
		g.open = make(chan struct{})
	}
}

// reopen lets the held-back attempts go, all at once.
func (g *Gate) reopen() {
	if g == nil {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.open != nil {
		close(g.open)
		g.open = nil
	}
}

// Pass returns when the gate is open, or false when ctx ends first. A nil
// Gate is always open.
func (g *Gate) Pass(ctx context.Context) bool {
	if g == nil {
		return true
	}
	g.mu.Lock()
	ch := g.open
	g.mu.Unlock()
	if ch == nil {
		return true
	}
	select {
	case <-ch:
		return true
	case <-ctx.Done():
		return false
	}
}
