package engine

import (
	"context"
	"sync"
	"time"
)

// memo does each (key, instant)'s work once, however many runs ask for it,
// concurrently or one after another: callers of the same key share one call
// and its result, which is kept until the instant is older than keep. The
// engine keeps one for metric executions and two for attached reports (their
// executions, and their files by format).
type memo[K comparable, V any] struct {
	mu      sync.Mutex
	calls   map[memoKey[K]]*memoCall[V]
	keep    time.Duration
	timeout time.Duration // of one shared call
	hit     func()        // counts a result taken from another caller
}

type memoKey[K comparable] struct {
	key K
	at  int64
}

type memoCall[V any] struct {
	done chan struct{}
	v    V
	err  error
}

func newMemo[K comparable, V any](keep, timeout time.Duration, hit func()) *memo[K, V] {
	return &memo[K, V]{calls: make(map[memoKey[K]]*memoCall[V]), keep: keep, timeout: timeout, hit: hit}
}

// do returns the result of key at instant at, calling work only if no other
// caller has (or is doing so) for the same pair. A failed call is not kept,
// so a later caller tries again.
func (m *memo[K, V]) do(ctx context.Context, key K, at time.Time, work func(context.Context) (V, error)) (V, error) {
	k := memoKey[K]{key, at.UnixNano()}
	m.mu.Lock()
	if c, ok := m.calls[k]; ok {
		m.mu.Unlock()
		m.hit()
		select {
		case <-c.done:
			return c.v, c.err
		case <-ctx.Done():
			var zero V
			return zero, ctx.Err()
		}
	}
	c := &memoCall[V]{done: make(chan struct{})}
	m.calls[k] = c
	m.pruneLocked(at)
	m.mu.Unlock()

	// The call is shared: it must not end because the first caller's run did,
	// so it has a deadline of its own.
	callCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), m.timeout)
	c.v, c.err = work(callCtx)
	cancel()
	if c.err != nil {
		m.mu.Lock()
		delete(m.calls, k)
		m.mu.Unlock()
	}
	close(c.done)
	return c.v, c.err
}

// pruneLocked forgets results of instants more than keep before at.
func (m *memo[K, V]) pruneLocked(at time.Time) {
	if len(m.calls) < 1024 {
		return
	}
	limit := at.Add(-m.keep).UnixNano()
	for k, c := range m.calls {
		select {
		case <-c.done:
			if k.at < limit {
				delete(m.calls, k)
			}
		default:
		}
	}
}
