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
	ttl   time.Duration
	mu    sync.Mutex
	m     map[K]recentEntry[V]
	swept time.Time // when put last dropped the expired entries
}

// maxRecent bounds the entries of a recent: past it, put forgets them all.
const maxRecent = 1 << 18

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

// put remembers v (or err) for key as loaded now. Once a ttl it drops the
// entries that expired, so it holds what the last two ttls loaded: a burst
// larger than maxRecent is the only reason to forget everything.
func (r *recent[K, V]) put(key K, v V, err error) {
	now := time.Now()
	r.mu.Lock()
	if now.Sub(r.swept) >= r.ttl {
		for k, e := range r.m {
			if now.Sub(e.at) >= r.ttl {
				delete(r.m, k)
			}
		}
		r.swept = now
	}
	if len(r.m) >= maxRecent {
		clear(r.m)
	}
	r.m[key] = recentEntry[V]{v: v, err: err, at: now}
	r.mu.Unlock()
}

// forget drops key, so the next get loads it.
func (r *recent[K, V]) forget(key K) {
	r.mu.Lock()
	delete(r.m, key)
	r.mu.Unlock()
}
