package engine

import (
	"context"
	"sync"
	"time"
)

// recent remembers lookups for a short while, so a burst of runs that share
// a subscription, a project or a channel reads each once rather than once per
// run. What it serves is at most ttl old.
type recent[K comparable, V any] struct {
	ttl time.Duration
	mu  sync.Mutex
	m   map[K]recentEntry[V]
}

type recentEntry[V any] struct {
	v   V
	err error
	at  time.Time
}

func newRecent[K comparable, V any](ttl time.Duration) *recent[K, V] {
	return &recent[K, V]{ttl: ttl, m: make(map[K]recentEntry[V])}
}

// get returns what load gave for key less than ttl ago, or loads it now.
// Errors are kept too (a deleted record stays not found), except a context's.
func (r *recent[K, V]) get(ctx context.Context, key K, load func(context.Context) (V, error)) (V, error) {
	now := time.Now()
	r.mu.Lock()
	e, ok := r.m[key]
	r.mu.Unlock()
	if ok && now.Sub(e.at) < r.ttl {
		return e.v, e.err
	}
	v, err := load(ctx)
	if ctx.Err() != nil {
		return v, err
	}
	r.put(key, v, err)
	return v, err
}

// put remembers v (or err) for key as loaded now.
func (r *recent[K, V]) put(key K, v V, err error) {
	r.mu.Lock()
	if len(r.m) > 100_000 {
		clear(r.m)
	}
	r.m[key] = recentEntry[V]{v: v, err: err, at: time.Now()}
	r.mu.Unlock()
}

// forget drops key, so the next get loads it.
func (r *recent[K, V]) forget(key K) {
	r.mu.Lock()
	delete(r.m, key)
	r.mu.Unlock()
}
