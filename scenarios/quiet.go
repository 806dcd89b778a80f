package scenarios

import (
	"context"
	"sync"
	"time"
)

// quietKeys holds back the other workers' acquires of a key, and the
// observer's reads of it, while a stalled holder sleeps past its lease
// (Plan.StallQuiet), until its next call returned: the key is then
// certainly free when that call comes, as on a lightly loaded lock, where
// most stalls in a contended one find the next holder already in. A bug
// that shows only on a free key (a quiet re-acquire on a nil extend) is
// then met on purpose, not by the luck of the waiting workers' backoff. A
// held-back worker has not called yet: to the history it waited longer
// before its attempt, as any client may.
type quietKeys struct {
	mu   sync.Mutex
	held map[string]chan struct{} // closed when the key's quiet ends
}

func newQuietKeys() *quietKeys { return &quietKeys{held: map[string]chan struct{}{}} }

// hold starts a quiet on key for at most bound, and returns its end. The
// bound keeps a holder that never calls again (the run ended) from
// holding the others back for good.
func (q *quietKeys) hold(key string, bound time.Duration) (end func()) {
	ch := make(chan struct{})
	q.mu.Lock()
	q.held[key] = ch
	q.mu.Unlock()
	var once sync.Once
	end = func() {
		once.Do(func() {
			q.mu.Lock()
			if q.held[key] == ch {
				delete(q.held, key)
			}
			q.mu.Unlock()
			close(ch)
		})
	}
	time.AfterFunc(bound, end)
	return end
}

// wait returns when key has no quiet, or false when ctx ends first. A
// nil quietKeys holds nothing back.
func (q *quietKeys) wait(ctx context.Context, key string) bool {
	for q != nil {
		q.mu.Lock()
		ch := q.held[key]
		q.mu.Unlock()
		if ch == nil {
			return ctx.Err() == nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return false
		}
	}
	return ctx.Err() == nil
}
