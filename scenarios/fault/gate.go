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
//
// A shut gate also hurries the holder: a worker between two steps of work
// ends its work there, writes and releases, as one whose work took less
// time (Hurry). Otherwise the fault would wait out the rest of the hold,
// 3-15 s in the default workload, before the key is free. A stalled or
// frozen holder does not hear it (it is not running), and an abandoned
// lock still expires by its TTL.
type Gate struct {
	mu   sync.Mutex
	open chan struct{} // nil while open; closed when the gate opens
	// shutting is closed when the gate shuts, and replaced when it opens.
	shutting chan struct{}
}

// NewGate makes an open Gate.
func NewGate() *Gate { return &Gate{} }

// shut holds back every acquire attempt from now on and hurries holders.
func (g *Gate) shut() {
	if g == nil {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.open == nil {
		g.open = make(chan struct{})
		close(g.shuttingLocked())
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
		g.shutting = make(chan struct{})
	}
}

// shuttingLocked is g.shutting, made on first use (a zero Gate is open).
func (g *Gate) shuttingLocked() chan struct{} {
	if g.shutting == nil {
		g.shutting = make(chan struct{})
	}
	return g.shutting
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

// Hurry is closed while the gate is shut: a holder at work waits on it
// beside its next step and ends its work early when it closes. A nil Gate
// never hurries (its channel is nil, which never receives).
func (g *Gate) Hurry() <-chan struct{} {
	if g == nil {
		return nil
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.shuttingLocked()
}
